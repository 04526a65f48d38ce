import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { invalidParam } from '../../shared/errors/index.ts'
import { tarGzStream } from '../../shared/algorithms/archive-stream.ts'
import type { AlgorithmPackage } from '../../shared/algorithms/types.ts'
import { producedFileResponse, scratchDirOf } from '../../shared/http/produced-file.ts'

export default defineHandler({
  routes: ['/gtw/cwai/algorithm/layout/export'],
  auth: 'session',
  body: 'json',
  summary: 'Streams algorithms (single Range supported) as one tar.gz (a folder per algorithm): the given ids, or every algorithm when none are given.',
  input: Type.Object({
    algorithmIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 256, uniqueItems: true })),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    const ids = input.algorithmIds ?? ctx.algorithms.list().map((e) => e.manifest.algorithmId)
    if (ids.length === 0) throw invalidParam('/algorithmIds', 'there is no algorithm to export')
    // Every package is checked (exists, exportable) before the first byte is sent.
    const packages: AlgorithmPackage[] = []
    for (const id of ids) packages.push(await ctx.algorithms.exportPackage(id))
    const scratch = scratchDirOf(ctx.config.dataPath)
    // spec 4.11: a single Range is served from the produced tar.gz.
    return producedFileResponse(ctx.request, scratch, () => tarGzStream(packages, scratch), {
      downloadName: `algorithms-${ctx.clock.now()}.tar.gz`,
      contentType: 'application/gzip',
    })
  },
})
