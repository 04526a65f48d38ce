import * as ort from 'onnxruntime-node'
import { ortTelemetryOff } from '../../shared/models/ort-telemetry.ts'

/**
 * Model sessions shared by every pipeline that uses the same model file (docs/architecture.md,
 * "The inference sidecar": tasks that use the same model share one session).
 * Reference-counted: the session is released when its last user lets go.
 */
export interface SessionOptions {
  /** onnxruntime intra-op threads (config `inferenceThreads`). */
  intraOpThreads: number
}

interface Entry { session: Promise<ort.InferenceSession>; refs: number }

export interface SessionLease {
  session: ort.InferenceSession
  release(): Promise<void>
}

export class SessionPool {
  readonly #entries = new Map<string, Entry>()
  readonly #options: ort.InferenceSession.SessionOptions

  constructor(options: SessionOptions) {
    ortTelemetryOff()
    // CPU execution provider; one inference uses the intra-op pool, graph nodes run in order.
    this.#options = {
      executionProviders: ['cpu'],
      intraOpNumThreads: Math.max(1, options.intraOpThreads),
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      logSeverityLevel: 3,
      // Idle intra-op threads would spin after each run and starve sharp's decode/encode
      // threads on a 2-core device.
      extra: { session: { intra_op: { allow_spinning: '0' } } },
    }
  }

  async acquire(modelPath: string): Promise<SessionLease> {
    let entry = this.#entries.get(modelPath)
    if (!entry) {
      entry = { session: ort.InferenceSession.create(modelPath, this.#options), refs: 0 }
      this.#entries.set(modelPath, entry)
      entry.session.catch(() => { if (this.#entries.get(modelPath) === entry && entry!.refs === 0) this.#entries.delete(modelPath) })
    }
    entry.refs++
    const held = entry
    let session: ort.InferenceSession
    try {
      session = await held.session
    } catch (error) {
      held.refs--
      if (held.refs === 0 && this.#entries.get(modelPath) === held) this.#entries.delete(modelPath)
      throw error
    }
    let released = false
    return {
      session,
      release: async () => {
        if (released) return
        released = true
        held.refs--
        if (held.refs === 0 && this.#entries.get(modelPath) === held) {
          this.#entries.delete(modelPath)
          await session.release()
        }
      },
    }
  }

  stats(): { model: string; refs: number }[] {
    return [...this.#entries].map(([model, e]) => ({ model, refs: e.refs }))
  }
}
