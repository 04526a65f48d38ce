import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/atomic/model/cancelUpload'],
  auth: 'session',
  body: 'json',
  summary: 'Cancels an open or complete upload: releases its reservation at once and deletes its bytes (spec 4.6).',
  input: Type.Object({ uploadId: Type.String({ minLength: 1, maxLength: 200 }) }),
  async handle(input, ctx) {
    await ctx.uploads.cancel(ctx.identity!, input.uploadId)
  },
})
