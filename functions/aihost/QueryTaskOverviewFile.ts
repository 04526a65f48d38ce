import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError, isApiError } from '../../shared/errors/index.ts'
import type { TasksService } from '../../shared/tasks/types.ts'
import { rangedFileResponse } from '../../shared/http/ranged-file.ts'

/** The URL-mode picture's file; null once it expired. */
async function pictureFile(tasks: Pick<TasksService, 'fullPicture'>, id: string): Promise<string | null> {
  try {
    return await tasks.fullPicture(id)
  } catch (error) {
    if (isApiError(error) && error.id === 'PictureNotFound') return null
    throw error
  }
}

export default defineHandler({
  routes: ['/v1/cwai/aihost/QueryTaskOverviewFile'],
  auth: 'session',
  body: 'json',
  summary: 'The latest annotated picture of a task (image/jpeg, streamed, single Range supported).',
  input: Type.Object({ taskId: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
  async handle(input, ctx) {
    const task = await ctx.tasks.get(input.taskId)
    const activity = ctx.tasks.activity(task.taskId)
    // In fullPicture URL mode the latest picture is the URL's, rendered on its first fetch.
    const file = activity?.overviewFile ?? (activity?.overviewPicture ? await pictureFile(ctx.tasks, activity.overviewPicture) : null)
    if (!file) throw new ApiError('OverviewNotFound', { details: { taskId: task.taskId } })
    try {
      return await rangedFileResponse(ctx.request, file, { downloadName: `overview-${task.taskId.replace(/[^A-Za-z0-9._-]/g, '_')}.jpg`, disposition: 'inline' })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ApiError('OverviewNotFound', { details: { taskId: task.taskId } })
      throw error
    }
  },
})
