import { defineHandler } from '../../shared/handler.ts'
import { UpdateAudioColumnInput } from '../../shared/audio/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Audio/UpdateAudioColumn'],
  auth: 'session',
  body: 'json',
  summary: 'Changes an audio column; fields not sent keep their value, password "" removes it (spec 4.10 Audio); AudioColumnNotFound.',
  input: UpdateAudioColumnInput,
  handle(input, ctx) {
    return ctx.audio.updateColumn(input)
  },
})
