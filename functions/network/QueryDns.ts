import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/network/QueryDns'],
  auth: 'session',
  body: 'json',
  summary: 'DNS servers and search domains the host resolves with (resolv.conf, or systemd-resolved\'s upstream servers behind its stub) (spec 4.10 Network).',
  input: Type.Object({}, { additionalProperties: false }),
  handle(_input, ctx) {
    return ctx.network.dns()
  },
})
