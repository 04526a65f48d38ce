import net from 'node:net'
import { ApiError } from '../../shared/errors/index.ts'
import { catalogue, type ErrorId } from '../../shared/errors/catalogue.ts'
import { monotonicNow } from '../../shared/clock.ts'
import { encodeFrame, FrameDecoder, RECOGNIZE_CALL, type SidecarOp, type WireError } from '../sidecar/protocol.ts'
import type { SidecarSupervisor } from './supervisor.ts'

interface Pending {
  resolve(frame: { result: unknown; body: Buffer }): void
  reject(error: Error): void
}

export interface ConnectionOptions {
  /** How long a new request waits for a (re)starting sidecar before failing retryably. */
  readyWaitMs: number
  /**
   * Runs on every new connection before it is ready: what the runtime had defined and loaded
   * is sent again (a restarted sidecar has nothing). `current` turns false once this
   * connection is lost or the client closed.
   */
  restore(current: () => boolean): Promise<void>
  /** A call the sidecar makes back (runtime/sidecar/protocol.ts RECOGNIZE_CALL), answered on `socket`. */
  onRecognize(socket: net.Socket, header: Record<string, unknown>, body: Buffer): void
}

const unavailable = (why: string) => new ApiError('SidecarUnavailable', { details: { reason: why } })

/**
 * The runtime's socket to the sidecar (runtime/sidecar/protocol.ts frames): connects whenever
 * the supervisor reports the sidecar ready, matches answers to requests by id, and fails every
 * request in flight at once with the retryable `SidecarUnavailable` when the sidecar goes
 * away (docs/architecture.md "The inference sidecar": it never hangs).
 */
export class SidecarConnection {
  readonly #supervisor: SidecarSupervisor
  readonly #options: ConnectionOptions
  readonly #pending = new Map<number, Pending>()
  #socket: net.Socket | null = null
  #ready = false
  #waiters: (() => void)[] = []
  #nextId = 1
  #closed = false

  constructor(supervisor: SidecarSupervisor, options: ConnectionOptions) {
    this.#supervisor = supervisor
    this.#options = options
    supervisor.on('ready', () => { void this.#connect() })
    supervisor.on('exit', () => this.#disconnected('sidecar exited'))
    if (supervisor.ready) void this.#connect()
  }

  /** Connected, and what the runtime had defined and loaded is restored. */
  get ready(): boolean {
    return this.#ready
  }

  async #connect(): Promise<void> {
    if (this.#closed) return
    this.#socket?.destroy()
    const socket = net.connect(this.#supervisor.socketPath)
    this.#socket = socket
    const decoder = new FrameDecoder()
    socket.on('data', (chunk) => {
      try {
        for (const frame of decoder.push(chunk)) {
          if (frame.header.call === RECOGNIZE_CALL) { this.#options.onRecognize(socket, frame.header, frame.body); continue }
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
    await this.#options.restore(() => !this.#closed && this.#socket === socket)
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

  async whenReady(): Promise<void> {
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

  /** One request on the current connection, without waiting for it to be ready. */
  send(op: SidecarOp, header: Record<string, unknown>, body?: Uint8Array, timeoutAt?: number, signal?: AbortSignal): Promise<{ result: unknown; body: Buffer }> {
    const socket = this.#socket
    if (!socket || socket.destroyed) return Promise.reject(unavailable('not connected'))
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined
      // The caller went away: the sidecar stops the request where it can (a detection waiting for memory) and answers.
      const cancel = () => { if (this.#pending.has(id)) this.send('cancel', { target: id }).catch(() => {}) }
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

  /** A request once the connection is ready (waits up to `readyWaitMs`). */
  async request(op: SidecarOp, header: Record<string, unknown> = {}, body?: Uint8Array, timeoutAt?: number, signal?: AbortSignal) {
    await this.whenReady()
    return this.send(op, header, body, timeoutAt, signal)
  }

  close(): void {
    this.#closed = true
    this.#disconnected('inference client closed')
    for (const wake of this.#waiters.splice(0)) wake()
  }
}

function toApiError(error: WireError): ApiError {
  if (error.errorId in catalogue && error.errorId !== 'Internal')
    return new ApiError(error.errorId as ErrorId, { details: error.details, msgText: error.message, ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds }) })
  // An unexpected sidecar failure: no internals reach the client.
  return new ApiError('Internal', { details: {}, cause: new Error(error.message) })
}
