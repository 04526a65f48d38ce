import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/QueryLogo'],
  auth: 'session',
  body: 'json',
  summary: 'The device logo (spec 4.10 System): {custom, contentType, width, height, sizeBytes, updatedAt, url}; custom false is the shipped default; url is an authenticated GET.',
  input: Type.Object({}, { additionalProperties: false }),
  handle(_input, ctx) {
    return ctx.logo.info()
  },
})
