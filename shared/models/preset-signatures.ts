import type { ModelSignature } from './onnx.ts'

/** Under dist/: what the build knows of each preset model file (models/convert/preset-signatures.ts). */
export const PRESET_SIGNATURES_FILE = 'models/preset-signatures.json'

/** Keyed by the model file's path relative to the project root. */
export type PresetSignatures = Record<string, { size: number; mtimeMs: number; sha256: string; signature: ModelSignature }>
