import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/v1/cwai/aihost/QueryTaskStatus'],
  auth: 'session',
  body: 'json',
  summary: 'State of a task: for an image-analysis task created/cancelled, loaded, detections served, last error; for a stream task (TaskCreate) its state, input and processed fps, discard rate, detector and critical-path latency, frames motion gating kept from the detector (motionSkipped; trackedSkipped: those kept while every motion lay on tracked objects), last error.',
  input: Type.Object({ taskId: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
  async handle(input, ctx) {
    if (ctx.streams.has(input.taskId)) return ctx.streams.status(input.taskId)
    return ctx.tasks.status(await ctx.tasks.get(input.taskId))
  },
})
