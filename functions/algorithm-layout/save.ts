import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { layoutRow } from '../../shared/algorithms/view.ts'

export default defineHandler({
  routes: ['/gtw/cwai/algorithm/layout/save'],
  auth: 'session',
  body: 'json',
  summary: 'Saves a pipeline layout (a manifest of atomic actions, see atomic/action/list): creates the algorithm or replaces its pipeline when no task uses it.',
  input: Type.Object({ manifest: Type.Object({}, { additionalProperties: true }) }, { additionalProperties: false }),
  async handle(input, ctx) {
    const { entry, created } = await ctx.algorithms.save(input.manifest, 'upsert')
    return { ...layoutRow(entry), created }
  },
})
