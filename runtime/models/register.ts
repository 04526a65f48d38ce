import { randomUUID } from 'node:crypto'
import { copyFile, mkdir, rename, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { eq } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { invalidParam } from '../../shared/errors/index.ts'
import { models } from '../../shared/db/schema/models.ts'
import { imageSizeOf, type ModelSignature } from '../../shared/models/onnx.ts'
import { sha256File } from '../digest.ts'
import { userModelDir, type ModelRow } from './store.ts'
import { MODEL_ID_PATTERN, type ModelSettings, type NewModelFile } from '../../shared/models/types.ts'

export interface NewUserModel extends NewModelFile {
  /** Opens the file as an ONNX model and reads its signature: the sidecar's `inspectModel` (ModelInvalid). */
  inspect: (file: string) => Promise<ModelSignature>
}

/**
 * Validates the file as a loadable ONNX model, stores it under `<DATA_DIR>/models/<id>.onnx`
 * and inserts the row. Nothing is left behind when a step fails (no half-registered model).
 */
export async function registerUserModel(db: Db, dataPath: string, now: number, input: NewUserModel): Promise<ModelRow> {
  const signature = await input.inspect(input.sourcePath)
  const modelId = input.modelId ?? `m-${randomUUID().replaceAll('-', '').slice(0, 16)}`
  // MODEL_ID_PATTERN has no '/': a chosen id names a file inside the models folder, never a path.
  if (!new RegExp(MODEL_ID_PATTERN).test(modelId)) throw invalidParam('/modelId', `must match ${MODEL_ID_PATTERN}`)
  const [taken] = await db.select({ modelId: models.modelId }).from(models).where(eq(models.modelId, modelId)).limit(1)
  if (taken) throw invalidParam('/modelId', 'a model with this id is already registered; delete it first')
  const dir = userModelDir(dataPath)
  await mkdir(dir, { recursive: true })
  const relative = path.join('models', `${modelId}.onnx`)
  const target = path.join(dataPath, relative)
  const temporary = `${target}.tmp`
  try {
    if (input.take === 'move') {
      await rename(input.sourcePath, temporary).catch(() => copyFile(input.sourcePath, temporary))
    } else {
      await copyFile(input.sourcePath, temporary)
    }
    const [sha256, { size }] = await Promise.all([sha256File(temporary), stat(temporary)])
    // No rename over a file that is already there (a model placed by hand keeps its bytes).
    if (await stat(target).then(() => true, () => false)) throw invalidParam('/modelId', 'a model file with this id already exists')
    await rename(temporary, target)
    const size2 = imageSizeOf(signature)
    const settings: ModelSettings = { inputWidth: size2?.width ?? null, inputHeight: size2?.height ?? null, normalization: null, labels: [] }
    const row: ModelRow = {
      modelId,
      modelName: input.modelName,
      source: 'user',
      format: 'onnx',
      location: relative,
      originalFilename: input.originalFilename,
      sizeBytes: size,
      sha256,
      signature: JSON.stringify(signature),
      settings: JSON.stringify(settings),
      exportable: input.exportable,
      encrypted: false,
      deviceBound: false,
      usedBy: '[]',
      createdAt: now,
      updatedAt: now,
    }
    await db.insert(models).values(row)
    return row
  } catch (error) {
    await rm(temporary, { force: true })
    await rm(target, { force: true })
    throw error
  }
}
