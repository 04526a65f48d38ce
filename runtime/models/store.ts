import { asc, eq, sql } from 'drizzle-orm'
import path from 'node:path'
import type { Db } from '../db/client.ts'
import { models } from '../../shared/db/schema/models.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { ModelSettings, ModelView } from '../../shared/models/types.ts'

export type ModelRow = typeof models.$inferSelect

/** Where user model files live. */
export const userModelDir = (dataPath: string) => path.join(dataPath, 'models')

/** Absolute path of a model's file. */
export const modelFilePath = (row: ModelRow, dataPath: string) =>
  row.source === 'preset' ? row.location : path.join(dataPath, row.location)

export function toView(row: ModelRow): ModelView {
  const signature = JSON.parse(row.signature) as { inputs: ModelView['inputs']; outputs: ModelView['outputs'] }
  const settings = JSON.parse(row.settings) as ModelSettings
  return {
    modelId: row.modelId,
    modelName: row.modelName,
    source: row.source,
    format: row.format,
    originalFilename: row.originalFilename,
    sizeBytes: String(row.sizeBytes),
    sha256: row.sha256,
    inputs: signature.inputs ?? [],
    outputs: signature.outputs ?? [],
    inputWidth: settings.inputWidth,
    inputHeight: settings.inputHeight,
    normalization: settings.normalization,
    labels: settings.labels,
    exportable: row.exportable,
    encrypted: row.encrypted,
    deviceBound: row.deviceBound,
    usedBy: JSON.parse(row.usedBy),
    createdAt: String(row.createdAt),
    updatedAt: String(row.updatedAt),
  }
}

export async function listModels(db: Db, filter: { source?: 'preset' | 'user'; offset?: number; limit?: number } = {}) {
  const where = filter.source ? eq(models.source, filter.source) : undefined
  return db.select().from(models).where(where).orderBy(asc(models.source), asc(models.createdAt), asc(models.modelId))
    .limit(filter.limit ?? -1).offset(filter.offset ?? 0)
}

export async function countModels(db: Db, source?: 'preset' | 'user') {
  const [row] = await db.select({ n: sql<number>`count(*)` }).from(models).where(source ? eq(models.source, source) : undefined)
  return Number(row?.n ?? 0)
}

export async function getModel(db: Db, modelId: string): Promise<ModelRow> {
  const [row] = await db.select().from(models).where(eq(models.modelId, modelId))
  if (!row) throw new ApiError('ModelNotFound', { details: { modelId } })
  return row
}
