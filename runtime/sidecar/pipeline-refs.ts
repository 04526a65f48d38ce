import type { LoadedManifest } from '../../models/load-manifests.ts'
import type { SidecarStats } from '../../shared/inference/types.ts'
import { EngineError } from './engine-error.ts'
import { MissingModelError } from './pipeline/model-lease.ts'
import { Pipeline } from './pipeline/pipeline.ts'
import type { SessionPool } from './session-pool.ts'

interface LoadedPipeline { pipeline: Promise<Pipeline>; refs: number }

/**
 * The sidecar's pipelines by algorithm, reference-counted: the first reference creates the
 * pipeline (sessions loaded and warmed, docs/architecture.md "The inference sidecar"), the
 * handles and `describe` that use it share it, and the last release closes it.
 */
export class PipelineRefs {
  readonly #pipelines = new Map<string, LoadedPipeline>()
  readonly #pool: SessionPool

  constructor(pool: SessionPool) {
    this.#pool = pool
  }

  /** A reference on the algorithm's pipeline, created (sessions loaded, warmed) by the first. */
  async acquire(algorithmId: string, loaded: LoadedManifest | undefined): Promise<void> {
    if (!loaded) throw new EngineError('ActionAlgLoadFailed', `unknown algorithm ${algorithmId}`, { algorithmCode: algorithmId })
    let entry = this.#pipelines.get(algorithmId)
    if (!entry) {
      entry = { pipeline: Pipeline.create(loaded, this.#pool), refs: 0 }
      this.#pipelines.set(algorithmId, entry)
    }
    entry.refs++
    try {
      await entry.pipeline
    } catch (error) {
      entry.refs--
      if (entry.refs === 0) this.#pipelines.delete(algorithmId)
      throw initializeFailed(algorithmId, error)
    }
  }

  /** The pipeline of an algorithm this caller holds a reference on. */
  get(algorithmId: string): Promise<Pipeline> {
    return this.#pipelines.get(algorithmId)!.pipeline
  }

  async release(algorithmId: string): Promise<void> {
    const entry = this.#pipelines.get(algorithmId)
    if (!entry) return
    entry.refs--
    if (entry.refs === 0) {
      this.#pipelines.delete(algorithmId)
      await (await entry.pipeline).close()
    }
  }

  stats(): SidecarStats['pipelines'] {
    return [...this.#pipelines].map(([algorithmId, e]) => ({ algorithmId, refs: e.refs }))
  }
}

/** `TaskCreateFailed` for a pipeline that could not be created or prepared, naming a missing model. */
export function initializeFailed(algorithmId: string, error: unknown): EngineError {
  const missing = error instanceof MissingModelError ? { missingModel: error.modelId } : {}
  return new EngineError('TaskCreateFailed', `pipeline ${algorithmId} failed to initialize: ${(error as Error).message}`, { algorithmCode: algorithmId, ...missing })
}
