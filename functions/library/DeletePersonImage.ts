import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { GalleryId, PersonId } from '../../shared/galleries/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Library/DeletePersonImage'],
  auth: 'session',
  body: 'json',
  summary: 'Deletes one face image of a person (spec 4.10 Face gallery).',
  input: Type.Object({ galleryId: GalleryId, personId: PersonId, faceId: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) }, { additionalProperties: false }),
  async handle(input, ctx) {
    await ctx.galleries.deleteFace(input.galleryId, input.personId, input.faceId)
    return undefined
  },
})
