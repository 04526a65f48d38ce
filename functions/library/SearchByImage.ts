import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { GalleryId, ImageFields } from '../../shared/galleries/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Library/SearchByImage'],
  auth: 'session',
  body: 'json',
  summary: 'For each face of the image, the closest persons (one gallery or all) with their cosine similarity, best first (spec 4.10 Face gallery).',
  input: Type.Object({
    galleryId: Type.Optional(GalleryId),
    ...ImageFields,
    topK: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 5 })),
    threshold: Type.Optional(Type.Number({ minimum: -1, maximum: 1 })),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    const faces = await ctx.galleries.search({
      galleryId: input.galleryId, image: { uploadId: input.uploadId, imageBase64: input.imageBase64 }, topK: input.topK ?? 5, threshold: input.threshold, identity: ctx.identity!,
    })
    return { faces }
  },
})
