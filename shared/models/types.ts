import { Type, type Static } from '@sinclair/typebox'
import type { TensorSignature } from './onnx.ts'

/** Operator-set configuration of a model (input size, normalization, labels). */
export const ModelSettings = Type.Object({
  inputWidth: Type.Union([Type.Integer({ minimum: 1, maximum: 16384 }), Type.Null()]),
  inputHeight: Type.Union([Type.Integer({ minimum: 1, maximum: 16384 }), Type.Null()]),
  normalization: Type.Union([Type.Object({
    // Pixel units (up to 16-bit samples); std is a divisor, so not near zero either.
    mean: Type.Array(Type.Number({ minimum: -65_535, maximum: 65_535 }), { minItems: 1, maxItems: 4 }),
    std: Type.Array(Type.Number({ minimum: 1e-6, maximum: 65_535 }), { minItems: 1, maxItems: 4 }),
  }, { additionalProperties: false }), Type.Null()]),
  labels: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 10_000 }),
}, { additionalProperties: false })
export type ModelSettings = Static<typeof ModelSettings>

/** A model as the API shows it (rows of `list`, result of `detail`, `upload`, `config`). */
export interface ModelView {
  modelId: string
  modelName: string
  source: 'preset' | 'user'
  format: string
  originalFilename: string
  /** Decimal string, as byte counts elsewhere (spec 8). */
  sizeBytes: string
  sha256: string
  inputs: TensorSignature[]
  outputs: TensorSignature[]
  inputWidth: number | null
  inputHeight: number | null
  normalization: ModelSettings['normalization']
  labels: string[]
  exportable: boolean
  encrypted: boolean
  deviceBound: boolean
  usedBy: string[]
  createdAt: string
  updatedAt: string
}

export const MODEL_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'

/** A model file to register as a user model (a claimed upload, or a file of the import folder). */
export interface NewModelFile {
  sourcePath: string
  /** Move it (claimed upload, same filesystem) or copy it (the import folder stays as it is). */
  take: 'move' | 'copy'
  originalFilename: string
  modelName: string
  exportable: boolean
  /** An id chosen by the operator (a pipeline names it as `{"uploaded": "<id>"}`); random when absent. */
  modelId?: string
}

/** What an operator may change of a user model (`Model/config`): its settings, name and export flag; an omitted field stays. */
export type ModelChanges = Partial<ModelSettings> & { modelName?: string; exportable?: boolean }

/**
 * `ctx.models`: the managed models, preset and user (spec 4.10-4.11; docs/system.md "Models").
 * Implemented by `runtime/models/service.ts`.
 */
export interface ModelsService {
  /** Preset models first, then by creation time. */
  list(filter?: { source?: 'preset' | 'user'; offset?: number; limit?: number }): Promise<ModelView[]>
  count(source?: 'preset' | 'user'): Promise<number>
  /** ModelNotFound when there is none. */
  get(modelId: string): Promise<ModelView>
  /** Opens the file as ONNX in the sidecar (ModelInvalid), stores it under `<DATA_DIR>/models/` and records it. */
  register(file: NewModelFile): Promise<ModelView>
  /** ModelPresetReadOnly for a preset; InvalidParam when normalization's mean and std differ in length. */
  configure(modelId: string, changes: ModelChanges): Promise<ModelView>
  /** Deletes a user model and its file; ModelPresetReadOnly, or ModelInUse while a created task runs an algorithm that names it. */
  remove(modelId: string): Promise<void>
  /** The file of an exportable user model and its download name; DefaultCantBeExport otherwise (spec 4.11). */
  exportFile(modelId: string): Promise<{ file: string; downloadName: string }>
}
