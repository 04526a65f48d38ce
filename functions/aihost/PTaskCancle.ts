import { Type } from '@sinclair/typebox'
import { findTask, markCancelled } from '../../shared/detection/task-store.ts'
import { ApiError, invalidParam } from '../../shared/errors/index.ts'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  // spec 4.8: the spelling of the path is as written.
  routes: ['/v1/cwai/aihost/PTaskCancle', '/gtw/cwai/aihost/PTaskCancle'],
  auth: 'session',
  body: 'json',
  summary: 'Cancel an image-analysis task and release what no other task uses (spec 4.8, 3.2).',
  input: Type.Object({
    mvDebug: Type.Optional(Type.String({ maxLength: 256 })),
    taskId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    algorithmCode: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  }),
  async handle(input, ctx) {
    const taskId = input.taskId ?? input.algorithmCode
    if (!taskId) throw invalidParam('/taskId', 'taskId or algorithmCode is required')
    // Under the task's lock: a detection that passed its state check is already in flight
    // (release answers TaskBusy), or it sees the task cancelled and never reloads it.
    await ctx.inference.exclusive(taskId, async () => {
      const task = await findTask(ctx.db, taskId)
      if (!task || task.state !== 'created' || (input.algorithmCode !== undefined && input.algorithmCode !== task.algorithmCode))
        throw new ApiError('NotCreated', { details: { taskId, ...(input.algorithmCode ? { algorithmCode: input.algorithmCode } : {}) } })
      // spec 3.2: only when no request is still running inference on the task (TaskBusy, retryable).
      await ctx.inference.release(taskId)
      await markCancelled(ctx.db, taskId, ctx.clock.now())
    })
    ctx.log.info({ taskId }, 'task cancelled')
    return undefined
  },
})
