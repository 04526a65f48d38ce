import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { Attributes, GalleryId, PersonId } from '../../shared/galleries/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Library/AddPerson'],
  auth: 'session',
  body: 'json',
  summary: 'Adds a person under a client-chosen personId with a name and free attributes (spec 4.10 Face gallery).',
  input: Type.Object({
    galleryId: GalleryId,
    personId: PersonId,
    name: Type.String({ minLength: 1, maxLength: 128 }),
    attributes: Type.Optional(Attributes),
  }, { additionalProperties: false }),
  handle: (input, ctx) => ctx.galleries.createPerson(input),
})
