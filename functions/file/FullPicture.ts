import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import path from 'node:path'
import { Readable } from 'node:stream'
import { Type } from '@sinclair/typebox'
import { FULL_PICTURE_ROUTE, PICTURE_ID, picturesDir } from '../../shared/detection/full-picture.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: [FULL_PICTURE_ROUTE],
  auth: 'session',
  body: 'none',
  methods: ['GET'],
  summary: 'The overlay picture of a detection when fullPicture is a URL (spec 2.6, FILE_SERVICE_BASE_URL).',
  input: Type.Object({ id: Type.String({ pattern: PICTURE_ID.source }) }),
  async handle(input, ctx) {
    // The id is a UUID (schema): the path cannot leave the pictures folder.
    const file = path.join(picturesDir(ctx.config), `${input.id}.jpg`)
    const info = await stat(file).catch(() => null)
    if (!info) throw new ApiError('PictureNotFound', { details: { id: input.id } })
    return new Response(Readable.toWeb(createReadStream(file)) as ReadableStream, {
      headers: { 'content-type': 'image/jpeg', 'content-length': String(info.size), 'cache-control': 'private, max-age=3600' },
    })
  },
})
