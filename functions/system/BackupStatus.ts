import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/BackupStatus'],
  auth: 'session',
  body: 'json',
  summary: 'The backup kept for download, a restore waiting for the restart, and the outcome of the last restore.',
  input: Type.Object({}, { additionalProperties: false }),
  handle(_input, ctx) {
    return ctx.backup.status()
  },
})
