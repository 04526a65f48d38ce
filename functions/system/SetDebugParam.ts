import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { LOG_LEVELS } from '../../shared/system/types.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/SetDebugParam'],
  auth: 'session',
  body: 'json',
  summary: 'Sets the log level and per-area debug switches, applied to the running device at once and kept across restarts (spec 4.10 System); areas not sent keep their switch; an unknown area is InvalidParam. Answers as QueryDebugParam.',
  input: Type.Object({
    logLevel: Type.Optional(Type.Union(LOG_LEVELS.map((l) => Type.Literal(l)))),
    areas: Type.Optional(Type.Record(Type.String({ pattern: '^[a-z][a-z0-9-]{0,31}$' }), Type.Boolean(), { maxProperties: 64, description: 'Area name (see QueryDebugParam) → debug on or off.' })),
  }, { additionalProperties: false }),
  handle(input, ctx) {
    return ctx.debug.set(input)
  },
})
