import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/atomic/model/uploadCapabilities'],
  auth: 'session',
  body: 'json',
  summary: 'Live upload limits, free space after the reserve, and in-flight reservations (spec 2.5, 4.4).',
  input: Type.Object({}),
  handle(_input, ctx) {
    return ctx.uploads.capabilities()
  },
})
