import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/atomic/model/uploadTemp'],
  auth: 'session',
  // spec 4.5, 8: one chunk per request, streamed; the chunk enforces maxChunkSize itself, the
  // HTTP layer the multipart limit (10 MB, or maxChunkSize + form overhead, within the backstop).
  body: 'multipart',
  bodyLimit: 'chunk',
  summary: 'Uploads one chunk of a resumable upload; chunk 0 opens (or resumes) the session (spec 4.5, 4.12).',
  input: Type.Object({}),
  handle(_input, ctx) {
    return ctx.uploads.receiveChunk(ctx.identity!, ctx.request!)
  },
})
