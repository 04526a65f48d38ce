import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { TaskConfigSchema } from '../../shared/tasks/types.ts'

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
    await ctx.tasks.create({ taskId, algorithmCode: input.algorithmCode, taskConfig: input.taskConfig, createdBy: ctx.identity?.userId ?? null })
    return undefined
  },
})
