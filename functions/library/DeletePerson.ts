import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { GalleryId, PersonId } from '../../shared/galleries/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Library/DeletePerson'],
  auth: 'session',
  body: 'json',
  summary: 'Deletes a person and their faces; recognition no longer finds them (spec 4.10 Face gallery).',
  input: Type.Object({ galleryId: GalleryId, personId: PersonId }, { additionalProperties: false }),
  async handle(input, ctx) {
    await ctx.galleries.deletePerson(input.galleryId, input.personId)
    return undefined
  },
})
