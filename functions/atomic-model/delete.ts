import { rm } from 'node:fs/promises'
import { eq } from 'drizzle-orm'
import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { models } from '../../shared/db/schema/models.ts'
import { getModel, modelFilePath } from '../../shared/models/store.ts'
import { MODEL_ID_PATTERN } from '../../shared/models/types.ts'

export default defineHandler({
  routes: ['/gtw/cwai/atomic/Model/delete'],
  auth: 'session',
  body: 'json',
  summary: 'Deletes a user model and its file; refused for presets and for models a task has loaded.',
  input: Type.Object({ modelId: Type.String({ pattern: MODEL_ID_PATTERN }) }, { additionalProperties: false }),
  async handle(input, ctx) {
    const row = await getModel(ctx.db, input.modelId)
    if (row.source === 'preset') throw new ApiError('ModelPresetReadOnly', { details: { modelId: row.modelId, usedBy: JSON.parse(row.usedBy) } })
    // A model with an open session in the sidecar belongs to a running task.
    const file = modelFilePath(row, ctx.config.dataPath)
    const loaded = (await ctx.device.inference())?.loadedModels.find((m) => (m.model === row.modelId || m.model === file) && m.refs > 0)
    if (loaded) throw new ApiError('ModelInUse', { details: { modelId: row.modelId, tasks: loaded.refs } })
    await ctx.db.delete(models).where(eq(models.modelId, row.modelId))
    await rm(file, { force: true })
    ctx.log.info({ modelId: row.modelId }, 'model deleted')
    return { modelId: row.modelId, deleted: true }
  },
})
