import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { GalleryId } from '../../shared/galleries/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Library/DeleteLibrary'],
  auth: 'session',
  body: 'json',
  summary: 'Deletes a face gallery with its persons and faces (spec 4.10 Face gallery).',
  input: Type.Object({ galleryId: GalleryId }, { additionalProperties: false }),
  async handle(input, ctx) {
    await ctx.galleries.deleteGallery(input.galleryId)
    return undefined
  },
})
