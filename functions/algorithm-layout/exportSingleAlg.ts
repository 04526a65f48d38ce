import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { zipStream } from '../../shared/algorithms/archive-stream.ts'
import { producedFileResponse, scratchDirOf } from '../../shared/http/produced-file.ts'

export default defineHandler({
  routes: ['/gtw/cwai/algorithm/layout/exportSingleAlg'],
  auth: 'session',
  body: 'json',
  summary: 'Streams one algorithm (single Range supported) as a zip package (manifest.json + its own model files) that Algorithm/upload installs again.',
  input: Type.Object({ algorithmId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
  async handle(input, ctx) {
    const pkg = await ctx.algorithms.exportPackage(input.algorithmId)
    // spec 4.11: a single Range is served from the produced zip.
    return producedFileResponse(ctx.request, scratchDirOf(ctx.config.dataPath), () => zipStream(pkg), {
      downloadName: `${pkg.algorithmId}-${pkg.manifest.version}.zip`,
      contentType: 'application/zip',
    })
  },
})
