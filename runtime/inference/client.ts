import net from 'node:net'
import { ApiError } from '../../shared/errors/index.ts'
import { catalogue, type ErrorId } from '../../shared/errors/catalogue.ts'
import type {
  DetectOutcome, DetectRequest, DetectionResultCore, ImageSource, InferenceService, SidecarStats,
} from '../../shared/inference/types.ts'
import type { TaskConfig } from '../../shared/tasks/types.ts'
import { encodeFrame, FrameDecoder, RECOGNIZE_CALL, unpackVectors, type SidecarOp, type WireError } from '../sidecar/protocol.ts'
import type { DescribedRegion, Recognize } from '../../shared/galleries/types.ts'
import { GALLERY_KINDS } from '../../shared/galleries/kinds.ts'
import type { SidecarSupervisor, SupervisorLog } from './supervisor.ts'
import type { LoadedManifest } from '../../models/load-manifests.ts'
import type { ModelSignature } from '../../shared/models/onnx.ts'
import type { DeviceMetrics } from '../metrics/index.ts'
import type { JpegSettings } from '../../shared/system/types.ts'
import { monotonicNow } from '../../shared/clock.ts'

interface Pending {
  resolve(frame: { result: unknown; body: Buffer }): void
  reject(error: Error): void
}

export interface ClientOptions {
  /** How long a new request waits for a (re)starting sidecar before failing retryably. */
  readyWaitMs?: number
  /** Extra time past a request's deadline before the client gives up on the answer. */
  deadlineGraceMs?: number
  log?: SupervisorLog
  /** Detection time per algorithm (docs/metrics.md "Metrics"). */
  metrics?: DeviceMetrics['inference']
}

const unavailable = (why: string) => new ApiError('SidecarUnavailable', { details: { reason: why } })

/**
 * `ctx.inference`: the runtime's side of the sidecar socket (shared/inference/types.ts).
 *
 * - A request in flight when the sidecar dies fails at once with the retryable
 *   `SidecarUnavailable` (docs/architecture.md, "The inference sidecar": it never hangs).
 * - Every loaded handle is remembered; after a restart the pipelines are loaded again before
 *   new requests go through, so a task id keeps working.
 * - Detections in flight are counted per handle: `release` of a busy handle is refused with
 *   the retryable `TaskBusy` (spec 4.8).
 */
export class SidecarClient implements InferenceService {
  readonly #supervisor: SidecarSupervisor
  readonly #options: Required<Omit<ClientOptions, 'log' | 'metrics'>>
  readonly #log: SupervisorLog | undefined
  readonly #metrics: DeviceMetrics['inference'] | undefined
  readonly #handles = new Map<string, { algorithmId: string; taskConfig: TaskConfig }>()
  /** Every algorithm the sidecar knows: defined again after each (re)start. */
  readonly #definitions = new Map<string, LoadedManifest>()
  readonly #inflight = new Map<string, number>()
  readonly #pending = new Map<number, Pending>()
  #socket: net.Socket | null = null
  #ready = false
  #waiters: (() => void)[] = []
  #nextId = 1
  #closed = false
  #recognize: Recognize | null = null
  #overlayJpeg: (() => JpegSettings) | null = null

  constructor(supervisor: SidecarSupervisor, options: ClientOptions = {}) {
    this.#supervisor = supervisor
    this.#options = { readyWaitMs: options.readyWaitMs ?? 30_000, deadlineGraceMs: options.deadlineGraceMs ?? 2_000 }
    this.#log = options.log
    this.#metrics = options.metrics
    supervisor.on('ready', () => { void this.#connect() })
    supervisor.on('exit', () => this.#disconnected('sidecar exited'))
    if (supervisor.ready) void this.#connect()
  }

  // ── connection ─────────────────────────────────────────────────────────────────────
  async #connect(): Promise<void> {
    if (this.#closed) return
    this.#socket?.destroy()
    const socket = net.connect(this.#supervisor.socketPath)
    this.#socket = socket
    const decoder = new FrameDecoder()
    socket.on('data', (chunk) => {
      try {
        for (const frame of decoder.push(chunk)) {
          if (frame.header.call === RECOGNIZE_CALL) { this.#answerRecognize(socket, frame.header, frame.body); continue }
          const h = frame.header as { id: number; ok: boolean; result?: unknown; error?: WireError }
          const pending = this.#pending.get(h.id)
          if (!pending) continue
          this.#pending.delete(h.id)
          if (h.ok) pending.resolve({ result: h.result, body: frame.body })
          else pending.reject(toApiError(h.error!))
        }
      } catch (error) {
        socket.destroy(error as Error)
      }
    })
    socket.on('error', () => {})
    socket.on('close', () => { if (this.#socket === socket) this.#disconnected('connection to sidecar closed') })
    const connected = await new Promise<boolean>((resolve) => { socket.once('connect', () => resolve(true)); socket.once('error', () => resolve(false)) })
    if (!connected) {
      // The process listens but the connection failed (transient): try again while it is up.
      if ((this.#socket === socket || this.#socket === null) && this.#supervisor.ready && !this.#closed) setTimeout(() => { void this.#connect() }, 200)
      return
    }
    if (this.#socket !== socket || socket.destroyed) return
    // Re-establish what the runtime had defined and loaded (after a restart the new process has nothing).
    for (const algorithm of this.#definitions.values()) {
      try {
        await this.#send('define', { algorithm })
      } catch (error) {
        // Closed, or this connection lost: the next connection defines everything again.
        if (this.#closed || this.#socket !== socket) return
        this.#log?.error({ algorithmId: algorithm.manifest.algorithmId, err: (error as Error).message }, 'could not define algorithm in sidecar')
      }
    }
    for (const [handle, entry] of this.#handles) {
      try {
        await this.#send('load', { handle, algorithmId: entry.algorithmId, taskConfig: entry.taskConfig })
      } catch (error) {
        // Not loaded: forgotten, so that `has` is false and the task is loaded on demand.
        if (this.#handles.get(handle) === entry) this.#handles.delete(handle)
        this.#log?.error({ handle, algorithmId: entry.algorithmId, err: (error as Error).message }, 'could not re-establish pipeline after sidecar restart')
      }
    }
    if (this.#socket !== socket || socket.destroyed) return
    this.#ready = true
    for (const wake of this.#waiters.splice(0)) wake()
  }

  #disconnected(why: string): void {
    this.#ready = false
    this.#socket?.destroy()
    this.#socket = null
    const failed = [...this.#pending.values()]
    this.#pending.clear()
    for (const p of failed) p.reject(unavailable(why))
  }

  async #whenReady(): Promise<void> {
    if (this.#ready) return
    if (this.#closed) throw unavailable('inference client is closed')
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== wake)
        reject(unavailable('sidecar is not ready'))
      }, this.#options.readyWaitMs)
      const wake = () => { clearTimeout(timer); resolve() }
      this.#waiters.push(wake)
    })
  }

  #send(op: SidecarOp, header: Record<string, unknown>, body?: Uint8Array, timeoutAt?: number, signal?: AbortSignal): Promise<{ result: unknown; body: Buffer }> {
    const socket = this.#socket
    if (!socket || socket.destroyed) return Promise.reject(unavailable('not connected'))
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined
      // The caller went away: the sidecar stops the request where it can (a detection waiting for memory) and answers.
      const cancel = () => { if (this.#pending.has(id)) this.#send('cancel', { target: id }).catch(() => {}) }
      signal?.addEventListener('abort', cancel, { once: true })
      const settle = <T>(f: (v: T) => void) => (v: T) => { if (timer) clearTimeout(timer); signal?.removeEventListener('abort', cancel); f(v) }
      this.#pending.set(id, { resolve: settle(resolve), reject: settle(reject) })
      if (timeoutAt !== undefined)
        timer = setTimeout(() => {
          if (!this.#pending.delete(id)) return
          reject(new ApiError('InferenceDeadlineExceeded', { details: { stage: 'sidecar' } }))
        }, Math.max(0, timeoutAt - monotonicNow()))
      socket.cork()
      for (const part of encodeFrame({ id, op, ...header }, body)) socket.write(part)
      socket.uncork()
    })
  }

  async #request(op: SidecarOp, header: Record<string, unknown> = {}, body?: Uint8Array, timeoutAt?: number, signal?: AbortSignal) {
    await this.#whenReady()
    return this.#send(op, header, body, timeoutAt, signal)
  }

  // ── gallery recognition (protocol.ts RECOGNIZE_CALL) ───────────────────────────────────
  /** The gallery search a `recognizer` node asks for during a detection (runtime/galleries). */
  setRecognizer(recognize: Recognize): void {
    this.#recognize = recognize
  }

  /** The overlay's JPEG settings, read at every detection and render (System image quality, applied live). */
  setOverlayJpeg(settings: () => JpegSettings): void {
    this.#overlayJpeg = settings
  }

  #answerRecognize(socket: net.Socket, header: Record<string, unknown>, body: Buffer): void {
    const answer = (reply: object) => {
      if (socket.destroyed) return
      socket.cork()
      for (const part of encodeFrame({ reply: true, id: header.id, ...reply })) socket.write(part)
      socket.uncork()
    }
    const fail = (error: unknown) => {
      this.#log?.error({ err: (error as Error).message }, 'gallery search for the sidecar failed')
      const wire = error instanceof ApiError ? { errorId: error.id, message: error.message, details: error.item.details } : { errorId: 'Internal', message: 'gallery search failed', details: {} }
      answer({ ok: false, error: wire })
    }
    try {
      if (!this.#recognize) throw new Error('no gallery search is set')
      const kind = GALLERY_KINDS.find((k) => k === header.kind)
      if (!kind) throw new Error(`unknown gallery kind ${String(header.kind)}`)
      const descriptors = unpackVectors(body, Number(header.count), Number(header.dims))
      this.#recognize({ kind, descriptors, galleryIds: (header.galleryIds ?? []) as string[], model: String(header.model) }).then((result) => answer({ ok: true, result }), fail)
    } catch (error) {
      fail(error)
    }
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
    const { result, body } = await this.#request('describe', header, image.kind === 'bytes' ? image.bytes : image.kind === 'rgb' ? image.data : undefined)
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
    if (this.#ready) await this.#send('define', { algorithm })
  }

  /** Forgets an algorithm. AlgorithmInUse while a loaded handle uses it (then it stays defined). */
  async forget(algorithmId: string): Promise<void> {
    for (const h of this.#handles.values())
      if (h.algorithmId === algorithmId) throw new ApiError('AlgorithmInUse', { details: { algorithmId } })
    this.#definitions.delete(algorithmId)
    if (this.#ready) await this.#send('forget', { algorithmId })
  }

  // ── InferenceService ───────────────────────────────────────────────────────────────
  async load(handle: string, algorithmId: string, taskConfig: TaskConfig = {}): Promise<void> {
    try {
      await this.#request('load', { handle, algorithmId, taskConfig })
    } catch (error) {
      // Switching to another algorithm may have released the old pipeline before failing.
      if (this.#handles.get(handle)?.algorithmId !== algorithmId) this.#handles.delete(handle)
      throw error
    }
    this.#handles.set(handle, { algorithmId, taskConfig })
  }

  async release(handle: string): Promise<void> {
    if ((this.#inflight.get(handle) ?? 0) > 0)
      throw new ApiError('TaskBusy', { details: { taskId: handle, running: this.#inflight.get(handle) } })
    this.#handles.delete(handle)
    try {
      await this.#request('release', { handle })
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
    if (!this.#ready) return
    try {
      await this.#send('load', { handle, algorithmId, taskConfig })
    } catch (error) {
      if (this.#handles.get(handle) === entry) this.#handles.delete(handle)
      throw error
    }
  }

  has(handle: string): boolean {
    return this.#handles.has(handle)
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
    const timeoutAt = request.deadline !== undefined ? request.deadline + this.#options.deadlineGraceMs : undefined
    // The label is the loaded algorithm's id (a bounded set), read before the request can change it.
    const algorithm = this.#handles.get(request.handle)?.algorithmId ?? 'unloaded'
    const started = performance.now()
    let outcome = 'error'
    this.#inflight.set(request.handle, (this.#inflight.get(request.handle) ?? 0) + 1)
    try {
      await this.#whenReady()
      // The sidecar gets what is left of the deadline (each process has its own monotonic clock).
      if (request.deadline !== undefined) header.budgetMs = request.deadline - monotonicNow()
      const { result, body: jpeg } = await this.#send('detect', header, body, timeoutAt, request.signal)
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
    return (await this.#request('overlay', { image, result, ...(this.#overlayJpeg ? { jpeg: this.#overlayJpeg() } : {}) }, body, undefined, signal)).body
  }

  async inspectModel(file: string): Promise<ModelSignature> {
    await this.#whenReady()
    try {
      return (await this.#send('inspectModel', { path: file })).result as ModelSignature
    } catch (error) {
      // The sidecar died while it had the model open: the model is what crashed onnxruntime.
      const died = error instanceof ApiError && error.id === 'SidecarUnavailable' && error.item.details.reason !== 'not connected'
      if (died) throw new ApiError('ModelInvalid', { details: { reason: 'the inference sidecar stopped while opening the model' } })
      throw error
    }
  }

  async stats(): Promise<SidecarStats> {
    return (await this.#request('stats')).result as SidecarStats
  }

  close(): void {
    this.#closed = true
    this.#disconnected('inference client closed')
    for (const wake of this.#waiters.splice(0)) wake()
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

function toApiError(error: WireError): ApiError {
  if (error.errorId in catalogue && error.errorId !== 'Internal')
    return new ApiError(error.errorId as ErrorId, { details: error.details, msgText: error.message, ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds }) })
  // An unexpected sidecar failure: no internals reach the client.
  return new ApiError('Internal', { details: {}, cause: new Error(error.message) })
}
