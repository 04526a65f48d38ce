import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/QueryDebugParam'],
  auth: 'session',
  body: 'json',
  summary: 'Debug settings (spec 4.10 System): {logLevel, areas: [{name, debug}]}; an area switched to debug logs at debug whatever logLevel is.',
  input: Type.Object({}, { additionalProperties: false }),
  handle(_input, ctx) {
    return ctx.debug.settings()
  },
})
