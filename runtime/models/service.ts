import { rm } from 'node:fs/promises'
import { eq } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { models } from '../../shared/db/schema/models.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { Clock } from '../../shared/handler.ts'
import type { AlgorithmRegistry } from '../../shared/algorithms/types.ts'
import type { InferenceService } from '../../shared/inference/types.ts'
import { safeFileName } from '../../shared/http/ranged-file.ts'
import type { ModelChanges, ModelSettings, ModelsService, ModelView, NewModelFile } from '../../shared/models/types.ts'
import { countModels, getModel, listModels, modelFilePath, toView } from './store.ts'
import { registerUserModel } from './register.ts'
import { modelUsage } from './usage.ts'

export interface ModelStoreOptions {
  db: Db
  dataPath: string
  clock: Clock
  /** Opens an uploaded file as ONNX before it is registered (`inspectModel`, ModelInvalid). */
  inference: Pick<InferenceService, 'inspectModel'>
  /** Which algorithms name a user model (a model in use is not deleted). */
  algorithms: AlgorithmRegistry
}

/** `ctx.models` (shared/models/types.ts): the `models` table and the files under `<DATA_DIR>/models/`. */
export class ModelStore implements ModelsService {
  readonly #o: ModelStoreOptions

  constructor(options: ModelStoreOptions) {
    this.#o = options
  }

  async list(filter: { source?: 'preset' | 'user'; offset?: number; limit?: number } = {}): Promise<ModelView[]> {
    return (await listModels(this.#o.db, filter)).map(toView)
  }

  count(source?: 'preset' | 'user'): Promise<number> {
    return countModels(this.#o.db, source)
  }

  async get(modelId: string): Promise<ModelView> {
    return toView(await getModel(this.#o.db, modelId))
  }

  async register(file: NewModelFile): Promise<ModelView> {
    const row = await registerUserModel(this.#o.db, this.#o.dataPath, this.#o.clock.now(), {
      ...file,
      inspect: (path) => this.#o.inference.inspectModel(path),
    })
    return toView(row)
  }

  async configure(modelId: string, changes: ModelChanges): Promise<ModelView> {
    const row = await getModel(this.#o.db, modelId)
    if (row.source === 'preset') throw new ApiError('ModelPresetReadOnly', { details: { modelId: row.modelId } })
    const { normalization } = changes
    if (normalization && normalization.mean.length !== normalization.std.length)
      throw new ApiError('InvalidParam', { details: { field: '/normalization/std', reason: 'must have as many values as mean' } })
    const current = JSON.parse(row.settings) as ModelSettings
    const settings: ModelSettings = {
      inputWidth: changes.inputWidth !== undefined ? changes.inputWidth : current.inputWidth,
      inputHeight: changes.inputHeight !== undefined ? changes.inputHeight : current.inputHeight,
      normalization: normalization !== undefined ? normalization : current.normalization,
      labels: changes.labels ?? current.labels,
    }
    const [updated] = await this.#o.db.update(models).set({
      modelName: changes.modelName ?? row.modelName,
      exportable: changes.exportable ?? row.exportable,
      settings: JSON.stringify(settings),
      updatedAt: this.#o.clock.now(),
    }).where(eq(models.modelId, row.modelId)).returning()
    return toView(updated!)
  }

  async remove(modelId: string): Promise<void> {
    const row = await getModel(this.#o.db, modelId)
    if (row.source === 'preset') throw new ApiError('ModelPresetReadOnly', { details: { modelId: row.modelId, usedBy: JSON.parse(row.usedBy) } })
    // Delete is refused while a task uses the model: while a created task runs an algorithm that
    // names the model. An algorithm with no task may lose it: PTaskCreate then answers
    // TaskCreateFailed naming the missing model until one is uploaded again (as for the helmet one).
    const usage = await modelUsage(this.#o.db, this.#o.algorithms, row.modelId)
    if (usage.taskIds.length > 0) throw new ApiError('ModelInUse', { details: { modelId: row.modelId, algorithmIds: usage.algorithmIds, taskIds: usage.taskIds } })
    const file = modelFilePath(row, this.#o.dataPath)
    await this.#o.db.delete(models).where(eq(models.modelId, row.modelId))
    await rm(file, { force: true })
  }

  async exportFile(modelId: string): Promise<{ file: string; downloadName: string }> {
    const row = await getModel(this.#o.db, modelId)
    // spec 4.11: a portability and security boundary, not a size quota.
    const reason = row.source === 'preset' ? 'preset' : row.encrypted ? 'encrypted' : row.deviceBound ? 'device-bound' : !row.exportable ? 'not-exportable' : null
    if (reason) throw new ApiError('DefaultCantBeExport', { details: { modelId: row.modelId, reason } })
    const downloadName = safeFileName(row.originalFilename.toLowerCase().endsWith('.onnx') ? row.originalFilename : `${row.originalFilename}.onnx`)
    return { file: modelFilePath(row, this.#o.dataPath), downloadName }
  }
}
