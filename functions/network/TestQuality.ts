import { defineHandler } from '../../shared/handler.ts'
import { TestSelection } from '../../shared/network/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/network/TestQuality'],
  auth: 'session',
  body: 'json',
  summary: 'Measure latency (min/avg/max), jitter and loss to the stored quality targets (all, or those named) with timed TCP connects; each connect is bounded by the stored timeout (spec 4.10 Network).',
  input: TestSelection,
  async handle(input, ctx) {
    const rows = await ctx.network.testQuality(input.names)
    return { total: rows.length, rows }
  },
})
