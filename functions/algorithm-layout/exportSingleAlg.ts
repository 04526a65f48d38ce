import { Readable } from 'node:stream'
import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { zipStream } from '../../shared/algorithms/archive-stream.ts'
import { contentDisposition } from '../../shared/http/rangedFile.ts'

export default defineHandler({
  routes: ['/gtw/cwai/algorithm/layout/exportSingleAlg'],
  auth: 'session',
  body: 'json',
  summary: 'Streams one algorithm as a zip package (manifest.json + its own model files) that Algorithm/upload installs again.',
  input: Type.Object({ algorithmId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
  async handle(input, ctx) {
    const pkg = await ctx.algorithms.exportPackage(input.algorithmId)
    return new Response(Readable.toWeb(zipStream(pkg)) as ReadableStream, {
      headers: {
        'Content-Type': 'application/zip',
        'Content-Disposition': contentDisposition('attachment', `${pkg.algorithmId}-${pkg.manifest.version}.zip`),
        'Cache-Control': 'no-store',
      },
    })
  },
})
