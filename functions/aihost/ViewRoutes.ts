import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/v1/cwai/aihost/ViewRoutes'],
  auth: 'session',
  body: 'json',
  summary: 'Every mounted route with its methods and authentication requirement.',
  input: Type.Object({}, { additionalProperties: false }),
  handle(_input, ctx) {
    const rows = ctx.routes().map((r) => ({
      path: r.path,
      methods: r.methods,
      authenticated: r.auth !== 'anonymous',
      auth: r.auth === 'anonymous' ? 'none' : r.auth === 'scrape' ? 'mtk-or-scrape-token' : r.auth === 'stream' ? 'mtk-or-stream-token' : 'mtk',
      body: r.body,
      summary: r.summary,
      ...(r.protocol ? { protocol: r.protocol } : {}),
    }))
    return { total: rows.length, rows }
  },
})
