import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/v1/cwai/aihost/Probe'],
  // spec 4.9, 5.2: the one AI-host route that needs no mtk.
  auth: 'anonymous',
  body: 'none',
  methods: ['GET', 'POST'],
  summary: 'Minimal liveness probe; no authentication.',
  input: Type.Object({}),
  handle(_input, ctx) {
    return { alive: true, timestamp: String(ctx.clock.now()) }
  },
})
