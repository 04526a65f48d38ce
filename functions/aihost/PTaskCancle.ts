import { Type } from '@sinclair/typebox'
import { invalidParam } from '../../shared/errors/index.ts'
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
    await ctx.tasks.cancel({ taskId, algorithmCode: input.algorithmCode })
    return undefined
  },
})
