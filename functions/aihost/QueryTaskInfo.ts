import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/v1/cwai/aihost/QueryTaskInfo'],
  auth: 'session',
  body: 'json',
  summary: 'Task details: status, algorithm, taskConfig, stage timings of the last detection, overview picture.',
  input: Type.Object({ taskId: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
  async handle(input, ctx) {
    const task = await ctx.tasks.get(input.taskId)
    const pipeline = ctx.device.pipeline(task.algorithmCode)
    const activity = ctx.tasks.activity(task.taskId)
    return {
      ...ctx.tasks.status(task),
      algorithm: pipeline ? { algorithmId: pipeline.algorithmId, algorithmName: pipeline.algorithmName, version: pipeline.version, nodes: pipeline.nodes.map((n) => ({ id: n.id, action: n.action })) } : null,
      taskConfig: task.taskConfig,
      createdBy: task.createdBy,
      // Per-stage durations (ms) of the last detection, measured in the sidecar.
      lastTimings: activity?.lastTimings ?? null,
      overviewAvailable: Boolean(activity?.overviewFile ?? activity?.overviewPicture),
      overviewAt: activity?.overviewAt == null ? null : String(activity.overviewAt),
    }
  },
})
