import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { Page } from '../../shared/galleries/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Library/LibraryPage'],
  auth: 'session',
  body: 'json',
  summary: 'Lists the face galleries with their person and face counts (spec 4.10 Face gallery).',
  input: Type.Object(Page, { additionalProperties: false }),
  handle: (input, ctx) => ctx.galleries.listGalleries({ pageNum: input.pageNum ?? 1, pageSize: input.pageSize ?? 20 }),
})
