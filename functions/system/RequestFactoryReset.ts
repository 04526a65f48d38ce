import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/RequestFactoryReset'],
  auth: 'session',
  body: 'json',
  summary: 'Step 1 of a factory reset: a single-use confirmation token for this session, valid FACTORY_RESET_TOKEN_TTL_MS. Nothing changes yet.',
  input: Type.Object({}, { additionalProperties: false }),
  handle(_input, ctx) {
    return ctx.backup.requestFactoryReset(ctx.identity!)
  },
})
