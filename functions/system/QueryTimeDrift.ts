import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/QueryTimeDrift'],
  auth: 'session',
  body: 'json',
  summary: 'Measures the device clock against each configured NTP server with one SNTP exchange (RFC 4330, 2 s timeout each): {measuredAt, samples: [{server, offsetMs, delayMs, stratum, error}]}; offsetMs > 0 means the device is behind.',
  input: Type.Object({}, { additionalProperties: false }),
  handle(_input, ctx) {
    return ctx.time.drift()
  },
})
