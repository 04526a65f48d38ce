import { defineHandler } from '../../shared/handler.ts'
import { TaskUpdateInput } from '../../shared/streams/types.ts'
import type { TaskConfig } from '../../shared/tasks/types.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Task/update'],
  auth: 'session',
  body: 'json',
  summary: 'Changes a stream task\'s parameters and regions (spec 4.10 Task): targetFps, taskConfig (regions, thresholds, spec 2.4), motionGating, minDetectIntervalMs, trackedDetectIntervalMs, regionDetection. NotCreated, InvalidParam, TaskCreateFailed; RegionInUse (details.areaIds, details.policies) when it removes a region alarm policies watch.',
  input: TaskUpdateInput,
  async handle(input, ctx) {
    if (input.taskConfig) ctx.alarms.checkTaskRegions(input.taskId, input.taskConfig as TaskConfig)
    await ctx.streams.update(input)
    return ctx.streams.status(input.taskId)
  },
})
