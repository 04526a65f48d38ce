import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/network/QueryRoutes'],
  auth: 'session',
  body: 'json',
  summary: 'The IPv4 and IPv6 routing table of the host and its default routes (lowest metric) (spec 4.10 Network).',
  input: Type.Object({}, { additionalProperties: false }),
  handle(_input, ctx) {
    return ctx.network.routes()
  },
})
