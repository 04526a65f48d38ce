import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { GalleryId, PersonId } from '../../shared/galleries/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Library/PersonDetail'],
  auth: 'session',
  body: 'json',
  summary: 'One person with the ids of their face images (spec 4.10 Face gallery).',
  input: Type.Object({ galleryId: GalleryId, personId: PersonId }, { additionalProperties: false }),
  handle: (input, ctx) => ctx.galleries.getPerson(input.galleryId, input.personId),
})
