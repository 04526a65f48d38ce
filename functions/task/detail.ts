import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Task/detail'],
  auth: 'session',
  body: 'json',
  summary: 'Run details of one stream task (spec 4.10 Task): its settings (taskConfig with regions, rate, gating) and live figures, as QueryTaskStatus. NotCreated.',
  input: Type.Object({ taskId: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
  async handle(input, ctx) {
    return ctx.streams.status(input.taskId)
  },
})
