import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { GalleryId, Page } from '../../shared/galleries/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Library/PersonPage'],
  auth: 'session',
  body: 'json',
  summary: 'Lists the persons of a gallery, optionally by name substring (spec 4.10 Face gallery).',
  input: Type.Object({ galleryId: GalleryId, name: Type.Optional(Type.String({ maxLength: 128 })), ...Page }, { additionalProperties: false }),
  handle: (input, ctx) => ctx.galleries.listPersons({ galleryId: input.galleryId, name: input.name, pageNum: input.pageNum ?? 1, pageSize: input.pageSize ?? 20 }),
})
