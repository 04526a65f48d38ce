import { defineHandler } from '../../shared/handler.ts'
import { NetworkTargets } from '../../shared/network/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/network/SetTargets'],
  auth: 'session',
  body: 'json',
  summary: 'Replace the network-quality targets (host, port) and connectivity checks (tcp host:port, http GET url, dns host name): the only hosts the device probes. Names must be unique (spec 4.10 Network).',
  input: NetworkTargets,
  handle(input, ctx) {
    return ctx.network.setTargets(input)
  },
})
