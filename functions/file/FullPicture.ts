import { Type } from '@sinclair/typebox'
import { FULL_PICTURE_ROUTE, PICTURE_ID } from '../../shared/tasks/full-picture.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { defineHandler } from '../../shared/handler.ts'
import { rangedFileResponse } from '../../shared/http/ranged-file.ts'

export default defineHandler({
  routes: [FULL_PICTURE_ROUTE],
  auth: 'session',
  body: 'none',
  methods: ['GET'],
  summary: 'The overlay picture of a detection when fullPicture is a URL (spec 2.6, FILE_SERVICE_BASE_URL).',
  input: Type.Object({ id: Type.String({ pattern: PICTURE_ID.source }) }),
  async handle(input, ctx) {
    // The id is a UUID (schema): the path cannot leave the pictures folder. The first fetch
    // renders the overlay (ImageMemoryBusy, retryable, while the sidecar has no memory for it).
    const file = await ctx.tasks.fullPicture(input.id)
    try {
      // spec 4.11: a managed-file download with single-Range support.
      return await rangedFileResponse(ctx.request, file, { downloadName: `${input.id}.jpg`, disposition: 'inline', contentType: 'image/jpeg', cacheControl: 'private, max-age=3600' })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ApiError('PictureNotFound', { details: { id: input.id } })
      throw error
    }
  },
})
