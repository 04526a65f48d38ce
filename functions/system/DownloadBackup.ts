import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/DownloadBackup'],
  auth: 'session',
  body: 'json',
  summary: 'The backup CreateBackup produced, as a tar.gz attachment (single Range supported), while the device keeps it (BACKUP_RETENTION_MS).',
  input: Type.Object({ backupId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
  handle(input, ctx) {
    return ctx.backup.download(input.backupId, ctx.request)
  },
})
