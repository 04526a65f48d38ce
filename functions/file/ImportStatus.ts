import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/File/ImportStatus'],
  auth: 'session',
  body: 'json',
  summary: 'Progress, counts and per-row errors of a face import job (spec 4.10 File import).',
  input: Type.Object({ jobId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
  handle: (input, ctx) => ctx.galleries.importStatus(input.jobId),
})
