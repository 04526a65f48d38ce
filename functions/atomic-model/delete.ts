import { rm } from 'node:fs/promises'
import { eq } from 'drizzle-orm'
import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { models } from '../../shared/db/schema/models.ts'
import { getModel, modelFilePath } from '../../shared/models/store.ts'
import { MODEL_ID_PATTERN } from '../../shared/models/types.ts'
import { modelUsage } from '../../shared/models/usage.ts'

export default defineHandler({
  routes: ['/gtw/cwai/atomic/Model/delete'],
  auth: 'session',
  body: 'json',
  summary: 'Deletes a user model and its file; refused for presets and while a created task runs an algorithm that names it.',
  input: Type.Object({ modelId: Type.String({ pattern: MODEL_ID_PATTERN }) }, { additionalProperties: false }),
  async handle(input, ctx) {
    const row = await getModel(ctx.db, input.modelId)
    if (row.source === 'preset') throw new ApiError('ModelPresetReadOnly', { details: { modelId: row.modelId, usedBy: JSON.parse(row.usedBy) } })
    // Delete is refused while a task uses the model: while a created task runs an algorithm that
    // names the model. An algorithm with no task may lose it: PTaskCreate then answers
    // TaskCreateFailed naming the missing model until one is uploaded again (as for the helmet one).
    const usage = await modelUsage(ctx.db, ctx.algorithms, row.modelId)
    if (usage.taskIds.length > 0) throw new ApiError('ModelInUse', { details: { modelId: row.modelId, algorithmIds: usage.algorithmIds, taskIds: usage.taskIds } })
    const file = modelFilePath(row, ctx.config.dataPath)
    await ctx.db.delete(models).where(eq(models.modelId, row.modelId))
    await rm(file, { force: true })
    ctx.log.info({ modelId: row.modelId }, 'model deleted')
    return { modelId: row.modelId, deleted: true }
  },
})
