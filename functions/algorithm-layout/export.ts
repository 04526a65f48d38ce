import path from 'node:path'
import { Readable } from 'node:stream'
import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { invalidParam } from '../../shared/errors/index.ts'
import { tarGzStream } from '../../shared/algorithms/archive-stream.ts'
import { contentDisposition } from '../../shared/http/rangedFile.ts'

export default defineHandler({
  routes: ['/gtw/cwai/algorithm/layout/export'],
  auth: 'session',
  body: 'json',
  summary: 'Streams algorithms as one tar.gz (a folder per algorithm): the given ids, or every algorithm when none are given.',
  input: Type.Object({
    algorithmIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 256, uniqueItems: true })),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    const ids = input.algorithmIds ?? ctx.algorithms.list().map((e) => e.manifest.algorithmId)
    if (ids.length === 0) throw invalidParam('/algorithmIds', 'there is no algorithm to export')
    // Every package is checked (exists, exportable) before the first byte is sent.
    const packages = []
    for (const id of ids) packages.push(await ctx.algorithms.exportPackage(id))
    const stream = await tarGzStream(packages, path.join(ctx.config.dataPath, 'tmp'))
    return new Response(Readable.toWeb(stream) as ReadableStream, {
      headers: {
        'Content-Type': 'application/gzip',
        'Content-Disposition': contentDisposition('attachment', `algorithms-${ctx.clock.now()}.tar.gz`),
        'Cache-Control': 'no-store',
      },
    })
  },
})
