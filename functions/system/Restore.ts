import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { Passphrase } from '../../shared/backup/schema.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/Restore'],
  auth: 'session',
  body: 'json',
  summary: 'Validates an uploaded backup (purpose backup) whole, then restarts the device, which replaces its data with the backup\'s all-or-nothing; a refused backup changes nothing.',
  input: Type.Object({
    uploadId: Type.String({ minLength: 1, maxLength: 128 }),
    passphrase: Passphrase,
  }, { additionalProperties: false }),
  handle(input, ctx) {
    return ctx.backup.restore(input.uploadId, input.passphrase, ctx.identity!)
  },
})
