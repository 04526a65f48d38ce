import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Algorithm/delete'],
  auth: 'session',
  body: 'json',
  summary: 'Deletes an algorithm (shipped ones stay deleted across restarts); refused with AlgorithmInUse while a created task uses it.',
  input: Type.Object({ algorithmId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
  async handle(input, ctx) {
    await ctx.algorithms.remove(input.algorithmId)
    return undefined
  },
})
