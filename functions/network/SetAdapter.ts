import { defineHandler } from '../../shared/handler.ts'
import { AdapterChange } from '../../shared/network/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/network/SetAdapter'],
  auth: 'session',
  body: 'json',
  summary: 'Change an adapter: static IPv4 address/prefix/gateway or DHCP, and DNS servers and search domains, written through the host\'s network backend. Validated first; unless ConfirmChange follows within the confirm timeout, the previous configuration comes back by itself (also after a restart) (spec 4.10 Network).',
  input: AdapterChange,
  handle(input, ctx) {
    return ctx.network.apply(input, ctx.identity?.accountName ?? null)
  },
})
