import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { LOGO_ROUTE } from '../../shared/system/types.ts'

export default defineHandler({
  routes: [LOGO_ROUTE],
  auth: 'session',
  body: 'none',
  methods: ['GET'],
  summary: 'The logo image (image/png, image/jpeg or image/svg+xml), custom or the shipped default (spec 4.10 System); served with a Content-Security-Policy that runs nothing.',
  input: Type.Object({}),
  async handle(_input, ctx) {
    const { bytes, contentType } = await ctx.logo.image()
    return new Response(new Uint8Array(bytes), {
      headers: {
        'Content-Type': contentType, 'Content-Length': String(bytes.length), 'Cache-Control': 'private, no-cache',
        // An SVG opened on its own still runs nothing and loads nothing (it was sanitised too).
        'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
      },
    })
  },
})
