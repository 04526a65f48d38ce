import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { rangedFileResponse } from '../../shared/http/ranged-file.ts'
import { MODEL_ID_PATTERN } from '../../shared/models/types.ts'

export default defineHandler({
  // spec 4.11 spells it `atomic/model/`, 4.10 `atomic/Model/`: the router matches paths case-insensitively.
  routes: ['/gtw/cwai/atomic/model/exportConfig'],
  auth: 'session',
  body: 'json',
  summary: 'Streams an exportable user model as an attachment (single Range supported); presets answer DefaultCantBeExport.',
  input: Type.Object({ modelId: Type.String({ pattern: MODEL_ID_PATTERN }) }, { additionalProperties: false }),
  async handle(input, ctx) {
    const { file, downloadName } = await ctx.models.exportFile(input.modelId)
    try {
      return await rangedFileResponse(ctx.request, file, { downloadName, contentType: 'application/octet-stream' })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ApiError('ModelFileMissing', { details: { modelId: input.modelId } })
      throw error
    }
  },
})
