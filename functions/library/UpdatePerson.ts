import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { Attributes, GalleryId, PersonId } from '../../shared/galleries/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Library/UpdatePerson'],
  auth: 'session',
  body: 'json',
  summary: 'Changes a person\'s name or replaces their attributes (spec 4.10 Face gallery).',
  input: Type.Object({
    galleryId: GalleryId,
    personId: PersonId,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    attributes: Type.Optional(Attributes),
  }, { additionalProperties: false }),
  handle: (input, ctx) => ctx.galleries.updatePerson(input),
})
