import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { layoutRow } from '../../shared/algorithms/view.ts'

export default defineHandler({
  routes: ['/gtw/cwai/algorithm/layout/detail'],
  auth: 'session',
  body: 'json',
  summary: 'The pipeline layout of one algorithm: its whole manifest, origin and last change.',
  input: Type.Object({ algorithmId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
  async handle(input, ctx) {
    const entry = ctx.algorithms.get(input.algorithmId)
    if (!entry) throw new ApiError('AlgorithmNotFound', { details: { algorithmId: input.algorithmId } })
    return { ...layoutRow(entry), manifest: entry.manifest }
  },
})
