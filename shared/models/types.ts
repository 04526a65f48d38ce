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
