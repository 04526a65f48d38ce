import { realpath } from 'node:fs/promises'
import path from 'node:path'
import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError } from '../../shared/errors/index.ts'

/** Where an operator (or a file transfer) puts model files for import. */
const importDir = (dataPath: string) => path.join(dataPath, 'import', 'models')

export default defineHandler({
  routes: ['/gtw/cwai/atomic/Model/import'],
  auth: 'session',
  body: 'json',
  summary: 'Registers a model file already in <DATA_DIR>/import/models/ (copied; the name cannot leave that folder).',
  input: Type.Object({
    // A plain file name: no folders, no leading dot.
    fileName: Type.String({ pattern: '^[A-Za-z0-9_][A-Za-z0-9._ -]{0,199}$' }),
    modelName: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    exportable: Type.Optional(Type.Boolean({ default: true })),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    const dir = importDir(ctx.config.dataPath)
    let file: string
    try {
      // The real path (after links) must still be inside the import folder.
      const [realDir, realFile] = await Promise.all([realpath(dir), realpath(path.join(dir, input.fileName))])
      if (path.dirname(realFile) !== realDir) throw new Error('outside')
      file = realFile
    } catch {
      throw new ApiError('ImportFileNotFound', { details: { fileName: input.fileName, folder: 'import/models' } })
    }
    return ctx.models.register({
      sourcePath: file,
      take: 'copy',
      originalFilename: input.fileName,
      modelName: input.modelName ?? input.fileName,
      exportable: input.exportable ?? true,
    })
  },
})
