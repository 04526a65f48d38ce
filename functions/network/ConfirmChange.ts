import { defineHandler } from '../../shared/handler.ts'
import { ChangeId } from '../../shared/network/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/network/ConfirmChange'],
  auth: 'session',
  body: 'json',
  summary: 'Keep a network change made by SetAdapter: send it to the device at its new address before confirmBy, which proves the device is reachable there; a confirmation arriving through an address the change gives up is refused (NetworkConfirmFromOldAddress) and the change stays pending (spec 4.10 Network).',
  input: ChangeId,
  handle(input, ctx) {
    return ctx.network.confirm(input.changeId, ctx.localAddress)
  },
})
