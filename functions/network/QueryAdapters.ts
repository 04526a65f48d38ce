import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/network/QueryAdapters'],
  auth: 'session',
  body: 'json',
  summary: 'Network adapters as the operating system reports them: name, MAC, type, MTU, link state, carrier, speed, IPv4/IPv6 addresses with prefixes, gateways, and whether IPv4 is DHCP or static (spec 4.10 Network).',
  input: Type.Object({}, { additionalProperties: false }),
  async handle(_input, ctx) {
    const rows = await ctx.network.adapters()
    return { total: rows.length, rows }
  },
})
