import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/v1/cwai/aihost/QueryTaskStatus'],
  auth: 'session',
  body: 'json',
  summary: 'State of an image-analysis task: created/cancelled, loaded, detections served, last error.',
  input: Type.Object({ taskId: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
  async handle(input, ctx) {
    return ctx.tasks.status(await ctx.tasks.get(input.taskId))
  },
})
