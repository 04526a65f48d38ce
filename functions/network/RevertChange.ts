import { defineHandler } from '../../shared/handler.ts'
import { ChangeId } from '../../shared/network/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/network/RevertChange'],
  auth: 'session',
  body: 'json',
  summary: 'Restore the configuration from before a pending network change now, instead of at its confirm deadline (spec 4.10 Network).',
  input: ChangeId,
  handle(input, ctx) {
    return ctx.network.revert(input.changeId)
  },
})
