import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { algorithmRow } from '../../shared/algorithms/view.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Algorithm/upload'],
  auth: 'session',
  body: 'json',
  summary: 'Installs an algorithm package (zip or tar.gz, as exportSingleAlg/export write them) from a completed upload of purpose `algorithm`.',
  input: Type.Object({
    uploadId: Type.String({ minLength: 1, maxLength: 128 }),
    // Overwrite algorithms of the package that exist already (refused while tasks use them).
    replace: Type.Optional(Type.Boolean({ default: false })),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    // spec 3.1: a complete upload is consumed once, by the identity that made it, for this purpose.
    const file = await ctx.uploads.claim(input.uploadId, ctx.identity!, 'algorithm', { keepUntilRelease: true })
    try {
      const entries = await ctx.algorithms.installArchive(file.path, { replace: input.replace ?? false })
      ctx.log.info({ uploadId: input.uploadId, algorithms: entries.map((e) => e.manifest.algorithmId) }, 'algorithm package installed')
      return { algorithms: entries.map(algorithmRow) }
    } finally {
      await file.release()
    }
  },
})
