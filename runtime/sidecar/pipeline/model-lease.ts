import { existsSync } from 'node:fs'
import type { LoadedManifest } from '../../../models/load-manifests.ts'
import { describeModelSource } from '../../../models/load-manifests.ts'
import type { SessionLease, SessionPool } from '../session-pool.ts'

/** A model file of the manifest is not there (an operator upload not done yet, or an unbuilt conversion). */
export class MissingModelError extends Error {
  constructor(readonly modelId: string, readonly expectedFile: string, readonly source: string) {
    super(`model ${modelId} (${source}) is missing: expected ${expectedFile}`)
  }
}

/** A lease on the session of one of the manifest's models (MissingModelError when its file is not there). */
export async function acquireModel(loaded: LoadedManifest, key: string, pool: SessionPool): Promise<SessionLease> {
  const file = loaded.modelPaths[key]!
  if (!existsSync(file)) {
    const source = loaded.manifest.models[key]!.source
    // The message names the file relative to its root (DATA_DIR or the project), never an absolute path.
    const where = 'uploaded' in source ? `<DATA_DIR>/${describeModelSource(source).file}` : describeModelSource(source).file
    // An operator's model is named by the modelId to upload it under, not by the manifest's key.
    throw new MissingModelError('uploaded' in source ? source.uploaded : key, where, 'uploaded' in source ? 'to be uploaded by an operator through model management' : 'build' in source ? 'a build output: run node build.mjs' : 'package file')
  }
  return pool.acquire(file)
}

/** The vector scaled to unit length (a zero vector stays zero). */
export function l2normalize(values: Float32Array): Float32Array {
  let sum = 0
  for (const v of values) sum += v * v
  const norm = Math.sqrt(sum) || 1
  return Float32Array.from(values, (v) => v / norm)
}
