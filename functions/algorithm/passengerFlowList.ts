import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { algorithmRow } from '../../shared/algorithms/view.ts'
import { countsPeople } from '../../shared/algorithms/passenger-flow.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Algorithm/passengerFlowList'],
  auth: 'session',
  body: 'json',
  summary: 'The algorithms that can count people for passenger-flow statistics: their result detector reports person boxes.',
  input: Type.Object({}, { additionalProperties: false }),
  async handle(_input, ctx) {
    const rows = ctx.algorithms.list().filter((e) => countsPeople(e.manifest)).map(algorithmRow)
    return { total: rows.length, rows }
  },
})
