import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { AudioId } from '../../shared/audio/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Audio/DeleteAudioFile'],
  auth: 'session',
  body: 'json',
  summary: 'Deletes an audio file and its stored MP3 (spec 4.10 Audio); AudioFileNotFound.',
  input: Type.Object({ audioId: AudioId }, { additionalProperties: false }),
  async handle(input, ctx) {
    await ctx.audio.deleteFile(input.audioId)
    return { audioId: input.audioId, deleted: true }
  },
})
