import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { algorithmRow } from '../../shared/algorithms/view.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Algorithm/add'],
  auth: 'session',
  body: 'json',
  summary: 'Adds an algorithm from a pipeline manifest (models/README.md); usable by PTaskCreate at once. An existing id answers AlgorithmExists.',
  input: Type.Object({
    // Validated whole by the registry (models/manifest-schema.ts) so that the reason names the field.
    manifest: Type.Object({}, { additionalProperties: true }),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    const { entry } = await ctx.algorithms.save(input.manifest, 'create')
    return algorithmRow(entry)
  },
})
