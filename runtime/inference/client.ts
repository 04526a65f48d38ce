import { ApiError } from '../../shared/errors/index.ts'
import type {
  DetectOutcome, DetectRequest, DetectionResultCore, ImageSource, InferenceService, SidecarStats,
} from '../../shared/inference/types.ts'
import type { TaskConfig } from '../../shared/tasks/types.ts'
import { unpackVectors } from '../sidecar/protocol.ts'
import type { DescribedRegion, Recognize } from '../../shared/galleries/types.ts'
import type { SidecarSupervisor, SupervisorLog } from './supervisor.ts'
import type { LoadedManifest } from '../../models/load-manifests.ts'
import type { ModelSignature } from '../../shared/models/onnx.ts'
import type { DeviceMetrics } from '../metrics/index.ts'
import type { JpegSettings } from '../../shared/system/types.ts'
import { monotonicNow } from '../../shared/clock.ts'
import { SidecarConnection } from './connection.ts'
import { answerRecognize } from './recognize-call.ts'

export interface ClientOptions {
  /** How long a new request waits for a (re)starting sidecar before failing retryably. */
  readyWaitMs?: number
  /** Extra time past a request's deadline before the client gives up on the answer. */
  deadlineGraceMs?: number
  log?: SupervisorLog
  /** Detection time per algorithm (docs/metrics.md "Metrics"). */
  metrics?: DeviceMetrics['inference']
}

/**
 * `ctx.inference`: the runtime's side of the sidecar socket (shared/inference/types.ts).
 *
 * - The socket is `SidecarConnection` (connection.ts): a request in flight when the sidecar
 *   dies fails at once with the retryable `SidecarUnavailable` (docs/architecture.md, "The
 *   inference sidecar": it never hangs).
 * - Every loaded handle is remembered; after a restart the pipelines are loaded again before
 *   new requests go through, so a task id keeps working.
 * - Detections in flight are counted per handle: `release` of a busy handle is refused with
 *   the retryable `TaskBusy` (spec 4.8).
 */
export class SidecarClient implements InferenceService {
  readonly #connection: SidecarConnection
  readonly #deadlineGraceMs: number
  readonly #log: SupervisorLog | undefined
  readonly #metrics: DeviceMetrics['inference'] | undefined
  readonly #handles = new Map<string, { algorithmId: string; taskConfig: TaskConfig }>()
  /** Every algorithm the sidecar knows: defined again after each (re)start. */
  readonly #definitions = new Map<string, LoadedManifest>()
  readonly #inflight = new Map<string, number>()
  #recognize: Recognize | null = null
  #overlayJpeg: (() => JpegSettings) | null = null

  constructor(supervisor: SidecarSupervisor, options: ClientOptions = {}) {
    this.#deadlineGraceMs = options.deadlineGraceMs ?? 2_000
    this.#log = options.log
    this.#metrics = options.metrics
    this.#connection = new SidecarConnection(supervisor, {
      readyWaitMs: options.readyWaitMs ?? 30_000,
      restore: (current) => this.#restore(current),
      onRecognize: (socket, header, body) => answerRecognize(socket, header, body, this.#recognize, this.#log),
    })
  }

  /** What the runtime had defined and loaded, sent again on a new connection (a restarted sidecar has nothing). */
  async #restore(current: () => boolean): Promise<void> {
    for (const algorithm of this.#definitions.values()) {
      try {
        await this.#connection.send('define', { algorithm })
      } catch (error) {
        // Closed, or this connection lost: the next connection defines everything again.
        if (!current()) return
        this.#log?.error({ algorithmId: algorithm.manifest.algorithmId, err: (error as Error).message }, 'could not define algorithm in sidecar')
      }
    }
    for (const [handle, entry] of this.#handles) {
      try {
        await this.#connection.send('load', { handle, algorithmId: entry.algorithmId, taskConfig: entry.taskConfig })
      } catch (error) {
        // Not loaded: forgotten, so that `has` is false and the task is loaded on demand.
        if (this.#handles.get(handle) === entry) this.#handles.delete(handle)
        this.#log?.error({ handle, algorithmId: entry.algorithmId, err: (error as Error).message }, 'could not re-establish pipeline after sidecar restart')
      }
    }
  }

  // ── gallery recognition (runtime/sidecar/protocol.ts RECOGNIZE_CALL) ───────────────────────────────────
  /** The gallery search a `recognizer` node asks for during a detection (runtime/galleries). */
  setRecognizer(recognize: Recognize): void {
    this.#recognize = recognize
  }

  /** The overlay's JPEG settings, read at every detection and render (System image quality, applied live). */
  setOverlayJpeg(settings: () => JpegSettings): void {
    this.#overlayJpeg = settings
  }

  /**
   * The regions of an image (faces, persons, or the whole image) with their descriptors (and
   * pictures when asked), from the algorithm's `recognizer` node; the engine's decode path
   * and limits apply.
   */
  async describe(algorithmId: string, image: ImageSource, options: { purpose?: string; pictures?: boolean } = {}): Promise<DescribedRegion[]> {
    const header: Record<string, unknown> = {
      algorithmId, purpose: options.purpose ?? 'image', pictures: options.pictures === true,
      image: image.kind === 'path' ? { kind: 'path', path: image.path } : image.kind === 'rgb' ? { kind: 'rgb', width: image.width, height: image.height } : { kind: 'bytes' },
    }
    const { result, body } = await this.#connection.request('describe', header, image.kind === 'bytes' ? image.bytes : image.kind === 'rgb' ? image.data : undefined)
    const r = result as { dims: number; model: string | null; regions: { box: DescribedRegion['box']; score: number; landmark: DescribedRegion['landmark']; pictureBytes: number }[] }
    const descriptors = unpackVectors(body, r.regions.length, r.dims)
    let at = r.regions.length * r.dims * 4
    return r.regions.map((f, i) => {
      const picture = f.pictureBytes > 0 ? Buffer.from(body.subarray(at, at + f.pictureBytes)) : null
      at += f.pictureBytes
      return { box: f.box, score: f.score, landmark: f.landmark, descriptor: descriptors[i]!, model: r.model!, picture }
    })
  }

  // ── algorithm definitions (runtime/algorithms/registry.ts) ─────────────────────────
  /** Defines (or replaces) an algorithm: now when the sidecar runs, and after every restart. */
  async define(algorithm: LoadedManifest): Promise<void> {
    this.#definitions.set(algorithm.manifest.algorithmId, algorithm)
    if (this.#connection.ready) await this.#connection.send('define', { algorithm })
  }

  /** Forgets an algorithm. AlgorithmInUse while a loaded handle uses it (then it stays defined). */
  async forget(algorithmId: string): Promise<void> {
    for (const h of this.#handles.values())
      if (h.algorithmId === algorithmId) throw new ApiError('AlgorithmInUse', { details: { algorithmId } })
    this.#definitions.delete(algorithmId)
    if (this.#connection.ready) await this.#connection.send('forget', { algorithmId })
  }

  // ── InferenceService ───────────────────────────────────────────────────────────────
  async load(handle: string, algorithmId: string, taskConfig: TaskConfig = {}): Promise<void> {
    try {
      await this.#connection.request('load', { handle, algorithmId, taskConfig })
    } catch (error) {
      // Switching to another algorithm may have released the old pipeline before failing.
      if (this.#handles.get(handle)?.algorithmId !== algorithmId) this.#handles.delete(handle)
      throw error
    }
    this.#handles.set(handle, { algorithmId, taskConfig })
  }

  async release(handle: string): Promise<void> {
    if (this.running(handle) > 0)
      throw new ApiError('TaskBusy', { details: { taskId: handle, running: this.running(handle) } })
    this.#handles.delete(handle)
    try {
      await this.#connection.request('release', { handle })
    } catch (error) {
      // A sidecar that is down holds nothing: it will not load this handle again.
      if (!(error instanceof ApiError && error.id === 'SidecarUnavailable')) throw error
    }
  }

  /**
   * Takes over a handle loaded in an earlier life of the runtime (tasks restored from the
   * database): loaded now when the sidecar is connected, otherwise on the next (re)connect.
   * A handle whose load fails is not kept (`has` is false), so PTaskDetectPic loads it on
   * demand and reports that load's error instead of NotCreated.
   */
  async adopt(handle: string, algorithmId: string, taskConfig: TaskConfig = {}): Promise<void> {
    const entry = { algorithmId, taskConfig }
    this.#handles.set(handle, entry)
    if (!this.#connection.ready) return
    try {
      await this.#connection.send('load', { handle, algorithmId, taskConfig })
    } catch (error) {
      if (this.#handles.get(handle) === entry) this.#handles.delete(handle)
      throw error
    }
  }

  has(handle: string): boolean {
    return this.#handles.has(handle)
  }

  running(handle: string): number {
    return this.#inflight.get(handle) ?? 0
  }

  loaded(handle: string): { algorithmId: string; taskConfig: TaskConfig } | undefined {
    return this.#handles.get(handle)
  }

  async detect(request: DetectRequest): Promise<DetectOutcome> {
    const { image, body } = wireImage(request.image)
    const header: Record<string, unknown> = {
      handle: request.handle,
      purpose: request.purpose ?? 'image',
      overlay: request.overlay !== false,
      ...(this.#overlayJpeg ? { jpeg: this.#overlayJpeg() } : {}),
      image,
    }
    const timeoutAt = request.deadline !== undefined ? request.deadline + this.#deadlineGraceMs : undefined
    // The label is the loaded algorithm's id (a bounded set), read before the request can change it.
    const algorithm = this.#handles.get(request.handle)?.algorithmId ?? 'unloaded'
    const started = performance.now()
    let outcome = 'error'
    this.#inflight.set(request.handle, (this.#inflight.get(request.handle) ?? 0) + 1)
    try {
      await this.#connection.whenReady()
      // The sidecar gets what is left of the deadline (each process has its own monotonic clock).
      if (request.deadline !== undefined) header.budgetMs = request.deadline - monotonicNow()
      const { result, body: jpeg } = await this.#connection.send('detect', header, body, timeoutAt, request.signal)
      const r = result as { result: DetectionResultCore; timings: Record<string, number> }
      outcome = 'ok'
      return { result: r.result, timings: r.timings, overlayJpeg: jpeg.length > 0 ? jpeg : null }
    } finally {
      this.#metrics?.duration.observe({ algorithm, outcome }, (performance.now() - started) / 1000)
      const left = (this.#inflight.get(request.handle) ?? 1) - 1
      if (left > 0) this.#inflight.set(request.handle, left)
      else this.#inflight.delete(request.handle)
    }
  }

  async renderOverlay(source: ImageSource, result: DetectionResultCore, signal?: AbortSignal): Promise<Buffer> {
    const { image, body } = wireImage(source)
    return (await this.#connection.request('overlay', { image, result, ...(this.#overlayJpeg ? { jpeg: this.#overlayJpeg() } : {}) }, body, undefined, signal)).body
  }

  async inspectModel(file: string): Promise<ModelSignature> {
    await this.#connection.whenReady()
    try {
      return (await this.#connection.send('inspectModel', { path: file })).result as ModelSignature
    } catch (error) {
      // The sidecar died while it had the model open: the model is what crashed onnxruntime.
      const died = error instanceof ApiError && error.id === 'SidecarUnavailable' && error.item.details.reason !== 'not connected'
      if (died) throw new ApiError('ModelInvalid', { details: { reason: 'the inference sidecar stopped while opening the model' } })
      throw error
    }
  }

  async stats(): Promise<SidecarStats> {
    return (await this.#connection.request('stats')).result as SidecarStats
  }

  close(): void {
    this.#connection.close()
  }
}

/** An image as the sidecar's frames carry it: described in the header, its bytes in the body. */
function wireImage(image: ImageSource): { image: Record<string, unknown>; body?: Uint8Array } {
  switch (image.kind) {
    case 'path': return { image: { kind: 'path', path: image.path } }
    case 'rgb': return { image: { kind: 'rgb', width: image.width, height: image.height }, body: image.data }
    default: return { image: { kind: 'bytes' }, body: image.bytes }
  }
}
