import { defineHandler } from '../../shared/handler.ts'
import { TaskCreateInput } from '../../shared/streams/types.ts'

export default defineHandler({
  routes: ['/v1/cwai/aihost/TaskCreate'],
  auth: 'session',
  body: 'json',
  summary: 'Starts a stream task (spec 4.9): continuous analysis of one camera with one algorithm at targetFps, with motion gating, tracking and object.entered / object.left events. Errors as PTaskCreate plus CameraNotFound and InvalidParam (targetFps above the source\'s rate).',
  input: TaskCreateInput,
  async handle(input, ctx) {
    const { reused } = await ctx.streams.create(input, ctx.identity!)
    return { taskId: input.taskId, reused }
  },
})
