import { ApiError } from '../errors/index.ts'
import { ortTelemetryOff } from './ort-telemetry.ts'

export interface TensorSignature {
  name: string
  type: string | null
  /** Dimensions; symbolic dimensions are strings, unknown ones null. */
  shape: (number | string | null)[]
}

export interface ModelSignature {
  inputs: TensorSignature[]
  outputs: TensorSignature[]
}

type Meta = { name: string; isTensor: boolean; type?: string; shape?: readonly (number | string)[] }
const describe = (meta: readonly Meta[]): TensorSignature[] =>
  meta.map((m) => ({ name: m.name, type: m.isTensor ? (m.type ?? null) : null, shape: m.isTensor ? [...(m.shape ?? [])].map((d) => d ?? null) : [] }))

/**
 * Opens the file as an onnxruntime session (CPU, one thread) to prove it loads, reads its
 * signature and releases the session. Throws ModelInvalid naming onnxruntime's reason.
 * Operator models are opened in the inference sidecar (op `inspectModel`); the runtime
 * calls this only for the preset models of the shipped pipelines.
 */
export async function inspectOnnx(file: string): Promise<ModelSignature> {
  ortTelemetryOff()
  const ort = await import('onnxruntime-node')
  let session: Awaited<ReturnType<typeof ort.InferenceSession.create>>
  try {
    session = await ort.InferenceSession.create(file, { executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'disabled', logSeverityLevel: 3 })
  } catch (error) {
    throw new ApiError('ModelInvalid', { details: { reason: String((error as Error).message ?? error).slice(0, 300) } })
  }
  try {
    return { inputs: describe(session.inputMetadata as readonly Meta[]), outputs: describe(session.outputMetadata as readonly Meta[]) }
  } finally {
    await session.release().catch(() => undefined)
  }
}

/** Input width and height from a 4-D image input (NCHW or NHWC with 1 or 3 channels). */
export function imageSizeOf(signature: ModelSignature): { width: number; height: number } | null {
  const shape = signature.inputs[0]?.shape
  if (!shape || shape.length !== 4) return null
  const [, a, b, c] = shape
  if (typeof a === 'number' && [1, 3].includes(a) && typeof b === 'number' && typeof c === 'number') return { height: b, width: c }
  if (typeof c === 'number' && [1, 3].includes(c) && typeof a === 'number' && typeof b === 'number') return { height: a, width: b }
  return null
}
