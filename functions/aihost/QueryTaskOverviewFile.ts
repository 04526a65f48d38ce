import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { rangedFileResponse } from '../../shared/http/ranged-file.ts'

export default defineHandler({
  routes: ['/v1/cwai/aihost/QueryTaskOverviewFile'],
  auth: 'session',
  body: 'json',
  summary: 'The latest annotated picture of a task (image/jpeg, streamed, single Range supported).',
  input: Type.Object({ taskId: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
  async handle(input, ctx) {
    const task = await ctx.tasks.get(input.taskId)
    const file = ctx.tasks.activity(task.taskId)?.overviewFile
    if (!file) throw new ApiError('OverviewNotFound', { details: { taskId: task.taskId } })
    try {
      return await rangedFileResponse(ctx.request, file, { downloadName: `overview-${task.taskId.replace(/[^A-Za-z0-9._-]/g, '_')}.jpg`, disposition: 'inline' })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ApiError('OverviewNotFound', { details: { taskId: task.taskId } })
      throw error
    }
  },
})
