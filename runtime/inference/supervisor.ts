import { fork, type ChildProcess } from 'node:child_process'
import { EventEmitter } from 'node:events'
import type { SidecarLaunchOptions } from '../sidecar/main.ts'
import { monotonicNow } from '../../shared/clock.ts'

export interface SupervisorLog {
  info(obj: object | string, msg?: string): void
  warn(obj: object | string, msg?: string): void
  error(obj: object | string, msg?: string): void
}

export interface SupervisorOptions {
  /** The built sidecar entry (dist/runtime/sidecar.mjs). */
  entry: string
  launch: SidecarLaunchOptions
  log?: SupervisorLog
  /** Restart delay: `initialMs` doubling up to `maxMs`; reset after `stableMs` of uptime. */
  backoff?: { initialMs: number; maxMs: number; stableMs: number }
  /** How long one start may take (model loading happens later, on `load`). */
  startTimeoutMs?: number
}

/**
 * glibc malloc for the sidecar (an operator's own values win): blocks of 128 KB and more are
 * always mapped and unmapped (glibc would otherwise raise that threshold after the first large
 * free and keep later image buffers in its heap for ever), free heap tops are trimmed from
 * 1 MB, two arenas instead of one per libvips and onnxruntime thread. Measured with twelve
 * concurrent 62-megapixel detections: the sidecar's RSS afterwards 120 MB instead of 380 MB.
 */
const SIDECAR_MALLOC = { MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '1048576', MALLOC_ARENA_MAX: '2' }

const silent: SupervisorLog = { info() {}, warn() {}, error() {} }

/**
 * Starts the inference sidecar and keeps it running (docs/architecture.md, "The inference
 * sidecar"): when it dies it is started again after a backoff delay. Emits `ready`
 * ({ pid, generation }) each time a process listens on the socket, and `exit`
 * ({ code, signal, generation }) each time one ends.
 */
export class SidecarSupervisor extends EventEmitter {
  readonly #options: SupervisorOptions
  readonly #log: SupervisorLog
  #child: ChildProcess | null = null
  #generation = 0
  #failures = 0
  #stopping = false
  #restartTimer: NodeJS.Timeout | null = null
  #ready = false

  constructor(options: SupervisorOptions) {
    super()
    this.#options = options
    this.#log = options.log ?? silent
  }

  get pid(): number | null { return this.#child?.pid ?? null }
  get ready(): boolean { return this.#ready }
  get generation(): number { return this.#generation }
  get socketPath(): string { return this.#options.launch.socketPath }

  /** Resolves when the first process is ready; rejects when it cannot start. */
  start(): Promise<void> {
    this.#stopping = false
    const ready = new Promise<void>((resolve, reject) => {
      const onReady = () => { this.off('exit', onExit); resolve() }
      const onExit = (info: { code: number | null }) => { this.off('ready', onReady); reject(new Error(`sidecar exited during start (code ${info.code})`)) }
      this.once('ready', onReady)
      this.once('exit', onExit)
    })
    this.#spawn()
    return ready
  }

  #spawn(): void {
    const generation = ++this.#generation
    const startedAt = monotonicNow()
    const child = fork(this.#options.entry, [JSON.stringify(this.#options.launch)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      // The sidecar collects released images itself (main.ts). Its live JS heap is ~10 MB, so
      // V8's old-space limit stayed just above it and it ran a mark-compact every one or two
      // detections (~5 ms each, measured: 84 in 150 detections of a 1920×1280 photo); a 64 MB
      // first limit leaves those to the explicit collections (none in 150).
      execArgv: ['--expose-gc', '--initial-old-space-size=64'],
      env: { ...SIDECAR_MALLOC, ...process.env },
      serialization: 'json',
    })
    this.#child = child
    const startTimer = setTimeout(() => {
      this.#log.error({ pid: child.pid, generation }, 'sidecar did not become ready in time; killing it')
      child.kill('SIGKILL')
    }, this.#options.startTimeoutMs ?? 60_000)
    child.on('message', (message: { type?: string }) => {
      if (message?.type !== 'ready' || child !== this.#child) return
      clearTimeout(startTimer)
      this.#ready = true
      this.#log.info({ pid: child.pid, generation }, 'inference sidecar ready')
      this.emit('ready', { pid: child.pid, generation })
    })
    child.on('exit', (code, signal) => {
      clearTimeout(startTimer)
      if (child !== this.#child) return
      this.#child = null
      this.#ready = false
      this.emit('exit', { code, signal, generation })
      if (this.#stopping) return
      const backoff = this.#options.backoff ?? { initialMs: 200, maxMs: 10_000, stableMs: 30_000 }
      if (monotonicNow() - startedAt > backoff.stableMs) this.#failures = 0
      const delay = Math.min(backoff.maxMs, backoff.initialMs * 2 ** this.#failures)
      this.#failures++
      this.#log.warn({ code, signal, generation, restartInMs: delay }, 'inference sidecar exited; restarting')
      this.#restartTimer = setTimeout(() => { this.#restartTimer = null; if (!this.#stopping) this.#spawn() }, delay)
    })
  }

  async stop(): Promise<void> {
    this.#stopping = true
    if (this.#restartTimer) clearTimeout(this.#restartTimer)
    const child = this.#child
    if (!child) return
    await new Promise<void>((resolve) => {
      const kill = setTimeout(() => child.kill('SIGKILL'), 5000)
      child.once('exit', () => { clearTimeout(kill); resolve() })
      // Closing the channel is the stop request: the sidecar ignores SIGTERM while it has a
      // runtime (a process-group stop must not cut its inferences).
      if (child.connected) child.disconnect()
      else child.kill('SIGTERM')
    })
  }
}

export type SidecarRestart = { exitCode: number | null; signal: string | null; restarts: number }

/**
 * Calls `listener` once per restart, from the supervisor's own notifications (`exit` with
 * { code, signal }, then `ready` with { generation }): a ready process after the first is a
 * restart. A process killed before it became ready was a restart too (Info counts every spawn
 * after the first): each exit since the last ready gets its own call, numbered so that the last
 * one's `restarts` is Info's count.
 */
export function onSidecarRestart(supervisor: EventEmitter, listener: (restart: SidecarRestart) => void): void {
  let exits: { code: number | null; signal: string | null }[] = []
  supervisor.on('exit', (exit: { code: number | null; signal: string | null }) => { exits.push(exit) })
  supervisor.on('ready', ({ generation }: { generation: number }) => {
    const since = exits
    exits = []
    if (generation <= 1) return
    // Generation g is restart g-1; the n exits before it were restarts g-n … g-1.
    since.forEach((exit, index) => listener({ exitCode: exit.code, signal: exit.signal, restarts: generation - since.length + index }))
  })
}
