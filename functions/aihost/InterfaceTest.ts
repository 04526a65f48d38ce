import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/v1/cwai/aihost/InterfaceTest'],
  auth: 'session',
  body: 'json',
  summary: 'Connectivity check for integrators: echoes `echo` back with the software version.',
  input: Type.Object({
    echo: Type.Optional(Type.String({ maxLength: 4096 })),
  }, { additionalProperties: false }),
  handle(input, ctx) {
    return {
      echo: input.echo ?? '',
      softwareVersion: ctx.process.softwareVersion,
      // spec 9: AI-host routes are versioned under /v1/.
      apiVersion: 'v1',
      accountName: ctx.identity?.accountName ?? null,
      requestId: ctx.requestId,
      timestamp: String(ctx.clock.now()),
    }
  },
})
