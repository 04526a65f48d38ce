import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ColumnId } from '../../shared/audio/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Audio/DeleteAudioColumn'],
  auth: 'session',
  body: 'json',
  summary: 'Removes an audio column (spec 4.10 Audio); AudioColumnNotFound.',
  input: Type.Object({ columnId: ColumnId }, { additionalProperties: false }),
  async handle(input, ctx) {
    await ctx.audio.deleteColumn(input.columnId)
    return { columnId: input.columnId, deleted: true }
  },
})
