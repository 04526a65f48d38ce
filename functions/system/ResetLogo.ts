import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/ResetLogo'],
  auth: 'session',
  body: 'json',
  summary: 'Removes the uploaded logo: the shipped default is shown again (spec 4.10 System). Answers as QueryLogo.',
  input: Type.Object({}, { additionalProperties: false }),
  handle(_input, ctx) {
    return ctx.logo.reset()
  },
})
