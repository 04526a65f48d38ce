import { defineHandler } from '../../shared/handler.ts'
import { AudioFilePageInput } from '../../shared/audio/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Audio/AudioFilePage'],
  auth: 'session',
  body: 'json',
  summary: 'Audio files, oldest first: {total, rows: [{audioId, audioName, originalName, sourceFormat, durationMs, sampleRate, channels, sizeBytes, inputLoudness, targetLoudness, createdBy, createdAt}]} (spec 4.10 Audio).',
  input: AudioFilePageInput,
  handle(input, ctx) {
    return ctx.audio.page(input)
  },
})
