import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { MODEL_ID_PATTERN } from '../../shared/models/types.ts'

export default defineHandler({
  routes: ['/gtw/cwai/atomic/Model/detail'],
  auth: 'session',
  body: 'json',
  summary: 'One model with its signature and configuration.',
  input: Type.Object({ modelId: Type.String({ pattern: MODEL_ID_PATTERN }) }, { additionalProperties: false }),
  async handle(input, ctx) {
    return ctx.models.get(input.modelId)
  },
})
