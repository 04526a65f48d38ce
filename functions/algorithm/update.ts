import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { invalidParam } from '../../shared/errors/index.ts'
import { algorithmRow } from '../../shared/algorithms/view.ts'

const Text = (maxLength: number) => Type.Optional(Type.String({ minLength: 1, maxLength }))

export default defineHandler({
  routes: ['/gtw/cwai/Algorithm/update'],
  auth: 'session',
  body: 'json',
  summary: 'Changes the descriptive fields of an algorithm row (spec 2.3); the pipeline is changed through algorithm/layout/save.',
  input: Type.Object({
    algorithmId: Type.String({ minLength: 1, maxLength: 64 }),
    algorithmName: Text(128),
    algorithmCategory: Text(64),
    supplier: Text(128),
    version: Text(32),
    description: Type.Optional(Type.String({ maxLength: 1024 })),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    const { algorithmId, ...patch } = input
    if (Object.keys(patch).length === 0) throw invalidParam('/', 'give at least one of algorithmName, algorithmCategory, supplier, version, description')
    return algorithmRow(await ctx.algorithms.updateInfo(algorithmId, patch))
  },
})
