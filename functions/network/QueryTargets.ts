import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/network/QueryTargets'],
  auth: 'session',
  body: 'json',
  summary: 'The stored network-quality targets and connectivity checks, with the sample count and per-probe timeout (spec 4.10 Network).',
  input: Type.Object({}, { additionalProperties: false }),
  handle(_input, ctx) {
    return ctx.network.targets()
  },
})
