import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { Passphrase } from '../../shared/backup/schema.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/CreateBackup'],
  auth: 'session',
  body: 'json',
  summary: 'Produces a backup (settings, accounts as hashes, algorithms and layouts, galleries, cameras, tasks and every other table but sessions, events, uploads and recordings) for DownloadBackup; credentials encrypted with the passphrase.',
  input: Type.Object({ passphrase: Passphrase }, { additionalProperties: false }),
  handle(input, ctx) {
    return ctx.backup.create(input.passphrase, ctx.identity!)
  },
})
