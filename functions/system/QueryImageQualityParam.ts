import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/QueryImageQualityParam'],
  auth: 'session',
  body: 'json',
  summary: 'JPEG settings of the pictures the device makes (spec 4.10 System): {overlay, snapshot, capture}, each {quality (1-100), maxSide (pixels, 0 = full size)}.',
  input: Type.Object({}, { additionalProperties: false }),
  handle(_input, ctx) {
    return ctx.imageQuality.current()
  },
})
