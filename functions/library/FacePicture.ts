import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Library/FacePicture'],
  auth: 'session',
  body: 'none',
  methods: ['GET'],
  summary: 'The aligned face picture (JPEG) of a stored face image, for the console (spec 4.10 Face gallery).',
  input: Type.Object({ faceId: Type.String({ pattern: '^[1-9][0-9]{0,15}$' }) }),
  async handle(input, ctx) {
    const picture = await ctx.galleries.facePicture(Number(input.faceId))
    return new Response(new Uint8Array(picture), { headers: { 'content-type': 'image/jpeg', 'cache-control': 'private, max-age=3600' } })
  },
})
