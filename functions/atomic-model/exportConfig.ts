import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { rangedFileResponse, safeFileName } from '../../shared/http/ranged-file.ts'
import { getModel, modelFilePath } from '../../shared/models/store.ts'
import { MODEL_ID_PATTERN } from '../../shared/models/types.ts'

export default defineHandler({
  // spec 4.11 spells it `atomic/model/`, 4.10 `atomic/Model/`: the router matches paths case-insensitively.
  routes: ['/gtw/cwai/atomic/model/exportConfig'],
  auth: 'session',
  body: 'json',
  summary: 'Streams an exportable user model as an attachment (single Range supported); presets answer DefaultCantBeExport.',
  input: Type.Object({ modelId: Type.String({ pattern: MODEL_ID_PATTERN }) }, { additionalProperties: false }),
  async handle(input, ctx) {
    const row = await getModel(ctx.db, input.modelId)
    // spec 4.11: a portability and security boundary, not a size quota.
    const reason = row.source === 'preset' ? 'preset' : row.encrypted ? 'encrypted' : row.deviceBound ? 'device-bound' : !row.exportable ? 'not-exportable' : null
    if (reason) throw new ApiError('DefaultCantBeExport', { details: { modelId: row.modelId, reason } })
    const name = safeFileName(row.originalFilename.toLowerCase().endsWith('.onnx') ? row.originalFilename : `${row.originalFilename}.onnx`)
    try {
      return await rangedFileResponse(ctx.request, modelFilePath(row, ctx.config.dataPath), { downloadName: name, contentType: 'application/octet-stream' })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ApiError('ModelFileMissing', { details: { modelId: row.modelId } })
      throw error
    }
  },
})
