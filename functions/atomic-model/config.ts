import { eq } from 'drizzle-orm'
import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { models } from '../../shared/db/schema/models.ts'
import { getModel, toView } from '../../shared/models/store.ts'
import { MODEL_ID_PATTERN, ModelSettings } from '../../shared/models/types.ts'

export default defineHandler({
  routes: ['/gtw/cwai/atomic/Model/config'],
  auth: 'session',
  body: 'json',
  summary: 'Sets a user model\'s name, input size, normalization, labels and exportable flag; omitted fields stay.',
  input: Type.Object({
    modelId: Type.String({ pattern: MODEL_ID_PATTERN }),
    modelName: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    inputWidth: Type.Optional(ModelSettings.properties.inputWidth),
    inputHeight: Type.Optional(ModelSettings.properties.inputHeight),
    normalization: Type.Optional(ModelSettings.properties.normalization),
    labels: Type.Optional(ModelSettings.properties.labels),
    exportable: Type.Optional(Type.Boolean()),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    const row = await getModel(ctx.db, input.modelId)
    if (row.source === 'preset') throw new ApiError('ModelPresetReadOnly', { details: { modelId: row.modelId } })
    const { normalization } = input
    if (normalization && normalization.mean.length !== normalization.std.length)
      throw new ApiError('InvalidParam', { details: { field: '/normalization/std', reason: 'must have as many values as mean' } })
    const current = JSON.parse(row.settings) as ModelSettings
    const settings: ModelSettings = {
      inputWidth: input.inputWidth !== undefined ? input.inputWidth : current.inputWidth,
      inputHeight: input.inputHeight !== undefined ? input.inputHeight : current.inputHeight,
      normalization: normalization !== undefined ? normalization : current.normalization,
      labels: input.labels ?? current.labels,
    }
    const [updated] = await ctx.db.update(models).set({
      modelName: input.modelName ?? row.modelName,
      exportable: input.exportable ?? row.exportable,
      settings: JSON.stringify(settings),
      updatedAt: ctx.clock.now(),
    }).where(eq(models.modelId, row.modelId)).returning()
    return toView(updated!)
  },
})
