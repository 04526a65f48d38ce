import { defineHandler } from '../../shared/handler.ts'
import { AddAudioColumnInput } from '../../shared/audio/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Audio/AddAudioColumn'],
  auth: 'session',
  body: 'json',
  summary: 'Registers an audio column (network speaker, spec 4.10 Audio) reached by HTTP push: url, method, format (mp3, wav, mulaw), credentials (never returned). Answers the column with passwordSet.',
  input: AddAudioColumnInput,
  handle(input, ctx) {
    return ctx.audio.addColumn(input)
  },
})
