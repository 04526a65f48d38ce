import { ApiError } from '../../shared/errors/index.ts'
import { defineHandler } from '../../shared/handler.ts'
import { rangedFileResponse } from '../../shared/http/ranged-file.ts'
import { CLIP_ROUTE, ClipMediaInput } from '../../shared/recording/types.ts'

export default defineHandler({
  routes: [CLIP_ROUTE],
  auth: 'stream',
  body: 'none',
  methods: ['GET'],
  summary: 'A recorded clip as video/mp4 with single-Range support (spec 4.11: 206, 416 when unsatisfiable); mtk, or the playback token of File/ClipPlayUrl in ?token=. ClipNotFound; ClipNotReady (503, retryable) for an alarm clip still being recorded.',
  input: ClipMediaInput,
  async handle(input, ctx) {
    const { file } = await ctx.recording.clip(input.id)
    try {
      return await rangedFileResponse(ctx.request, file, { downloadName: `${input.id}.mp4`, disposition: 'inline', contentType: 'video/mp4', cacheControl: 'private, max-age=3600' })
    } catch (error) {
      // Retention may delete the clip between the lookup and the read.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ApiError('ClipNotFound', { details: { clipId: input.id } })
      throw error
    }
  },
})
