import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/FactoryReset'],
  auth: 'session',
  body: 'json',
  summary: 'Step 2 of a factory reset, with the token of RequestFactoryReset: the device restarts and removes everything but the software (database, data folders, uploads, pictures, galleries); it comes back at first sign-in.',
  input: Type.Object({ confirmationToken: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
  handle(input, ctx) {
    return ctx.backup.factoryReset(input.confirmationToken, ctx.identity!)
  },
})
