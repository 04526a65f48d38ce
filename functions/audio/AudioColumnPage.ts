import { defineHandler } from '../../shared/handler.ts'
import { AudioColumnPageInput } from '../../shared/audio/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Audio/AudioColumnPage'],
  auth: 'session',
  body: 'json',
  summary: 'Audio columns, oldest first: {total, rows: [{columnId, columnName, protocol, url, method, format, username, passwordSet, timeoutMs, createdAt, updatedAt}]}; passwords are never returned (spec 4.10 Audio).',
  input: AudioColumnPageInput,
  handle(input, ctx) {
    return ctx.audio.columns(input)
  },
})
