import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
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
  handle({ modelId, ...changes }, ctx) {
    return ctx.models.configure(modelId, changes)
  },
})
