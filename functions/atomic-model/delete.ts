import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { MODEL_ID_PATTERN } from '../../shared/models/types.ts'

export default defineHandler({
  routes: ['/gtw/cwai/atomic/Model/delete'],
  auth: 'session',
  body: 'json',
  summary: 'Deletes a user model and its file; refused for presets and while a created task runs an algorithm that names it.',
  input: Type.Object({ modelId: Type.String({ pattern: MODEL_ID_PATTERN }) }, { additionalProperties: false }),
  async handle(input, ctx) {
    await ctx.models.remove(input.modelId)
    ctx.log.info({ modelId: input.modelId }, 'model deleted')
    return { modelId: input.modelId, deleted: true }
  },
})
