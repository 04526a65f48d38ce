import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Task/switch'],
  auth: 'session',
  body: 'json',
  summary: 'Enables or disables a stream task without deleting it (spec 4.10 Task): disabled, it stops reading its camera (state `disabled`, kept across restarts). NotCreated.',
  input: Type.Object({ taskId: Type.String({ minLength: 1, maxLength: 128 }), enabled: Type.Boolean() }, { additionalProperties: false }),
  async handle(input, ctx) {
    await ctx.streams.setEnabled(input.taskId, input.enabled)
    return ctx.streams.status(input.taskId)
  },
})
