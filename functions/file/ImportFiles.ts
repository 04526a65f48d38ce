import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { GalleryId } from '../../shared/galleries/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/File/ImportFiles'],
  auth: 'session',
  body: 'json',
  summary: 'Imports persons into a face gallery from a zip or tar.gz (images + manifest.csv or manifest.json) uploaded with purpose face-import; an asynchronous job (spec 4.10 File import).',
  input: Type.Object({ galleryId: GalleryId, uploadId: Type.String({ minLength: 1, maxLength: 256 }) }, { additionalProperties: false }),
  handle: (input, ctx) => ctx.galleries.startImport({ galleryId: input.galleryId, uploadId: input.uploadId, identity: ctx.identity! }),
})
