import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/QueryRecordParam'],
  auth: 'session',
  body: 'json',
  summary: 'Recording settings and state (spec 4.10 System: recording): retention days, budget, headroom above the disk reserve, usage, and per camera its mode (off, events, continuous), pre/post-roll and state.',
  input: Type.Object({}, { additionalProperties: false }),
  handle(_input, ctx) {
    return ctx.recording.params()
  },
})
