import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { rangedFileResponse } from '../../shared/http/ranged-file.ts'
import { AUDIO_PREVIEW_ROUTE } from '../../shared/audio/types.ts'
import { AudioId } from '../../shared/audio/schemas.ts'

export default defineHandler({
  routes: [AUDIO_PREVIEW_ROUTE],
  auth: 'session',
  body: 'none',
  methods: ['GET'],
  summary: 'The stored (normalized) MP3 of an audio file, audio/mpeg, single Range supported (spec 4.10 Audio, 4.11); AudioFileNotFound.',
  input: Type.Object({ audioId: AudioId }),
  async handle(input, ctx) {
    const file = await ctx.audio.fileOf(input.audioId)
    try {
      return await rangedFileResponse(ctx.request, file.path, { downloadName: file.downloadName, disposition: 'inline', contentType: 'audio/mpeg', cacheControl: 'private, no-store' })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ApiError('AudioFileNotFound', { details: { audioId: input.audioId } })
      throw error
    }
  },
})
