import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { GalleryId, ImageFields, PersonId } from '../../shared/galleries/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Library/AddPersonImage'],
  auth: 'session',
  body: 'json',
  summary: 'Adds a face image to a person: exactly one face must be found (GalleryFaceCount names the count); its descriptor and aligned picture are stored (spec 4.10, 4.12).',
  input: Type.Object({ galleryId: GalleryId, personId: PersonId, ...ImageFields }, { additionalProperties: false }),
  handle: (input, ctx) => ctx.galleries.addFace({
    galleryId: input.galleryId, personId: input.personId, image: { uploadId: input.uploadId, imageBase64: input.imageBase64 }, identity: ctx.identity!,
  }),
})
