import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Camera/usbList'],
  auth: 'session',
  body: 'json',
  summary: 'Lists the V4L2 video devices present (spec 4.10 Camera): `{rows: [{device, name}]}`, empty on a machine without any.',
  input: Type.Object({}),
  async handle(_input, ctx) {
    return { rows: await ctx.cameras.usbList() }
  },
})
