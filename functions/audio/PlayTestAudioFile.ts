import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { AudioId } from '../../shared/audio/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Audio/PlayTestAudioFile'],
  auth: 'session',
  body: 'json',
  summary: 'Play test of an audio file (spec 4.10 Audio): decodes the stored file now and answers {audioId, decodedDurationMs, sampleRate, channels, previewUrl}; previewUrl is an authenticated GET (mtk header) of the MP3 with single Range.',
  input: Type.Object({ audioId: AudioId }, { additionalProperties: false }),
  handle(input, ctx) {
    return ctx.audio.playTest(input.audioId)
  },
})
