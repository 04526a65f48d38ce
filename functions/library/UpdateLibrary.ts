import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { GalleryId } from '../../shared/galleries/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Library/UpdateLibrary'],
  auth: 'session',
  body: 'json',
  summary: 'Renames a face gallery or changes its description (spec 4.10 Face gallery).',
  input: Type.Object({
    galleryId: GalleryId,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    description: Type.Optional(Type.String({ maxLength: 1024 })),
  }, { additionalProperties: false }),
  handle: (input, ctx) => ctx.galleries.updateGallery(input),
})
