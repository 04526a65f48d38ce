import { Type } from '@sinclair/typebox'
import { eq } from 'drizzle-orm'
import { algorithms } from '../../shared/db/schema/index.ts'
import { findTask, saveCreatedTask } from '../../shared/detection/task-store.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { defineHandler } from '../../shared/handler.ts'
import { TaskConfigSchema } from '../../shared/inference/types.ts'

export const TaskCreateInput = Type.Object({
  algorithmCode: Type.String({ minLength: 1, maxLength: 128 }),
  // spec 4.3: compatibility field, a 13-digit millisecond timestamp; the local algorithm is loaded by algorithmCode.
  algorithmUpdateTime: Type.String({ pattern: '^[0-9]{13}$' }),
  taskId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  mvDebug: Type.Optional(Type.String({ maxLength: 256 })),
  taskConfig: Type.Optional(TaskConfigSchema),
})

export default defineHandler({
  routes: ['/v1/cwai/aihost/PTaskCreate', '/gtw/cwai/aihost/PTaskCreate'],
  auth: 'session',
  body: 'json',
  summary: 'Create (or reuse) an image-analysis task: loads the algorithm pipeline (spec 4.3, 3.2).',
  input: TaskCreateInput,
  async handle(input, ctx) {
    // spec 2.4: taskId defaults to algorithmCode (clients that omit it share one task).
    const taskId = input.taskId ?? input.algorithmCode
    const [algorithm] = await ctx.db.select().from(algorithms).where(eq(algorithms.algorithmId, input.algorithmCode)).limit(1)
    // spec 7.1: an algorithmCode that does not exist (or is not running) → ActionAlgLoadFailed.
    if (!algorithm || algorithm.runningStatus !== 0)
      throw new ApiError('ActionAlgLoadFailed', { details: { algorithmCode: input.algorithmCode } })
    // Under the task's lock, like PTaskDetectPic and PTaskCancle (spec 3.2 transitions never interleave).
    const reused = await ctx.inference.exclusive(taskId, async () => {
      const existing = await findTask(ctx.db, taskId)
      const created = existing?.state === 'created' ? existing : undefined
      // spec 3.2: created + PTaskCreate with the same taskId → the existing task is reused,
      // unconditionally. With another algorithmCode the task id is kept and the task now runs
      // that algorithm (README "Tasks"): the old pipeline is released first, refused with the
      // retryable TaskBusy while a detection runs on it (as PTaskCancle, spec 4.8), and the
      // old taskConfig is not carried over. A taskConfig sent again replaces the old one.
      const switching = created !== undefined && created.algorithmCode !== input.algorithmCode
      if (switching) await ctx.inference.release(taskId)
      const taskConfig = input.taskConfig ?? (created && !switching ? created.taskConfig : {})
      await ctx.inference.load(taskId, input.algorithmCode, taskConfig)
      await saveCreatedTask(ctx.db, { taskId, algorithmCode: input.algorithmCode, taskConfig, createdBy: ctx.identity?.userId ?? null }, ctx.clock.now())
      return created ? { previousAlgorithmCode: created.algorithmCode } : null
    })
    ctx.log.info({ taskId, algorithmCode: input.algorithmCode, reused: reused !== null, ...(reused ?? {}) }, 'task created')
    return undefined
  },
})
