import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/QueryLogFiles'],
  auth: 'session',
  body: 'json',
  summary: 'The device\'s log files, oldest first: {total, rows: [{name, sizeBytes, modifiedAt, active}]}; the active file only grows, rotated ones do not change (spec 4.10 System).',
  input: Type.Object({}, { additionalProperties: false }),
  handle(_input, ctx) {
    const rows = ctx.debug.logFiles()
    return { total: rows.length, rows }
  },
})
