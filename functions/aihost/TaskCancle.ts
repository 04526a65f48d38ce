import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/v1/cwai/aihost/TaskCancle'],
  auth: 'session',
  body: 'json',
  summary: 'Stops a stream task (spec 4.9) and releases its camera reader and pipeline; NotCreated when unknown.',
  input: Type.Object({ taskId: Type.String({ minLength: 1, maxLength: 128 }), mvDebug: Type.Optional(Type.Unknown()) }, { additionalProperties: false }),
  async handle(input, ctx) {
    await ctx.streams.cancel(input.taskId)
    return undefined
  },
})
