import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { AudioId, ColumnId } from '../../shared/audio/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Audio/PlayOnAudioColumn'],
  auth: 'session',
  body: 'json',
  summary: 'Plays an audio file on an audio column (spec 4.10 Audio): pushes it in the column\'s format and answers {columnId, audioId, format, bytesSent, httpStatus, timeMs} once the column answered; plays on one column wait for each other. AudioFileNotFound, AudioColumnNotFound, AudioColumnUnreachable, AudioColumnAuthFailed, AudioColumnRejected.',
  input: Type.Object({ columnId: ColumnId, audioId: AudioId }, { additionalProperties: false }),
  handle(input, ctx) {
    return ctx.audio.playOnColumn({ ...input, signal: ctx.signal })
  },
})
