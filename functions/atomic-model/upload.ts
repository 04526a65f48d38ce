import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { MODEL_ID_PATTERN } from '../../shared/models/types.ts'

export default defineHandler({
  routes: ['/gtw/cwai/atomic/Model/upload'],
  auth: 'session',
  body: 'json',
  summary: 'Registers a completed upload of purpose `model` as a user model after opening it as ONNX.',
  input: Type.Object({
    uploadId: Type.String({ minLength: 1, maxLength: 128 }),
    modelName: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    // Binds the model to a pipeline that names it (e.g. `helmet-classifier`); random when absent.
    modelId: Type.Optional(Type.String({ pattern: MODEL_ID_PATTERN })),
    exportable: Type.Optional(Type.Boolean({ default: true })),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    // spec 3.1, 5.4: consumed once, by the identity that uploaded it, for this purpose.
    const file = await ctx.uploads.claim(input.uploadId, ctx.identity!, 'model', { keepUntilRelease: true })
    try {
      const model = await ctx.models.register({
        sourcePath: file.path,
        take: 'move',
        originalFilename: file.originalFilename,
        modelName: input.modelName ?? file.originalFilename,
        exportable: input.exportable ?? true,
        ...(input.modelId ? { modelId: input.modelId } : {}),
      })
      ctx.log.info({ modelId: model.modelId, uploadId: input.uploadId }, 'model uploaded')
      return model
    } finally {
      await file.release()
    }
  },
})
