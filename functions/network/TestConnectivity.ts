import { defineHandler } from '../../shared/handler.ts'
import { TestSelection } from '../../shared/network/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/network/TestConnectivity'],
  auth: 'session',
  body: 'json',
  summary: 'Run the stored connectivity checks (all, or those named): TCP connect, HTTP GET, DNS resolution; per check ok, time and status, addresses or error, each bounded by the stored timeout (spec 4.10 Network).',
  input: TestSelection,
  async handle(input, ctx) {
    const rows = await ctx.network.testConnectivity(input.names)
    return { allOk: rows.every((row) => row.ok), total: rows.length, rows }
  },
})
