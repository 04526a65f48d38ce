import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ColumnId } from '../../shared/audio/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Audio/TestAudioColumn'],
  auth: 'session',
  body: 'json',
  summary: 'Connectivity test of an audio column (spec 4.10 Audio): a TCP connect to its host and port, then an HTTP HEAD of its URL with its credentials: {columnId, reachable, connectMs, httpStatus, authOk, error}. Plays nothing.',
  input: Type.Object({ columnId: ColumnId }, { additionalProperties: false }),
  handle(input, ctx) {
    return ctx.audio.testColumn(input.columnId)
  },
})
