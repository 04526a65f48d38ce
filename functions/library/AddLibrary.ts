import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { GalleryId } from '../../shared/galleries/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Library/AddLibrary'],
  auth: 'session',
  body: 'json',
  summary: 'Creates a face gallery (spec 4.10 Face gallery); galleryId is generated when absent.',
  input: Type.Object({
    galleryId: Type.Optional(GalleryId),
    name: Type.String({ minLength: 1, maxLength: 128 }),
    description: Type.Optional(Type.String({ maxLength: 1024 })),
  }, { additionalProperties: false }),
  handle: (input, ctx) => ctx.galleries.createGallery(input),
})
