import type { ApiError } from '../../shared/errors/index.ts'
import { monotonicNow } from '../../shared/clock.ts'
import type { CameraStatus } from '../../shared/cameras/types.ts'
import type { Frame, Reader, ReaderHandlers } from './reader.ts'
import { failure } from './reader.ts'

/**
 * How many of the last frames a channel keeps, and for how long (ms): at the burst rate (10 fps) the
 * 0.6 s before a snapshot's search starts; at 1 fps the latest two.
 */
const RECENT_FRAMES = 6
const RECENT_MS = 2000

export interface ChannelOptions {
  /** Opens a reader on the source (may fail at once, e.g. an HTTP source that answers 401). */
  openReader(handlers: ReaderHandlers): Promise<Reader>
  /** Every frame, as it arrives. */
  onFrame(frame: Frame): void
  reconnectMinMs: number
  reconnectMaxMs: number
  /** Called on every status change. */
  onStatus(status: CameraStatus, previous: CameraStatus): void
}

/**
 * One camera's connection state machine: connecting → online (a frame arrived) ⇄ offline
 * (the reader failed; reconnect after a delay that doubles up to a maximum, back to the
 * minimum once online). Keeps the latest frame for capture.
 */
export class CameraChannel {
  status: CameraStatus = 'connecting'
  error: ApiError | null = null
  fps: number | null = null
  latest: Frame | null = null
  /** Size of the last frame; kept while offline (the source's size as last seen). */
  size: { width: number; height: number } | null = null
  private reader: Reader | null = null
  private retry: NodeJS.Timeout | null = null
  private delay: number
  private stopped = false
  /**
   * Which connection attempt is current: a restart while a reader is still being opened (an
   * update of the camera during a reconnect) makes the older attempt stale, and a stale attempt's
   * reader is stopped and its frames and failures are ignored (else two readers would run).
   */
  private attempt = 0
  private waiters: { resolve(): void; reject(error: ApiError): void }[] = []
  /**
   * The last frames (oldest first, the latest last), for a snapshot's frame at or after an analysed one
   * (full-frame.ts): at most RECENT_FRAMES, none older than RECENT_MS.
   */
  recent: Frame[] = []
  /** Searches holding the reader at its burst rate (full-frame.ts), and until when it is armed (arm). */
  private holds = 0
  private armedUntil = 0
  private armTimer: NodeJS.Timeout | null = null
  private bursting = false
  /** Who waits for the next frame (nextFrame): null when the source fails or the wait ends. */
  private nextWaiters: ((frame: Frame | null) => void)[] = []

  constructor(private readonly options: ChannelOptions) {
    this.delay = options.reconnectMinMs
  }

  /** The ffmpeg process reading the source, if one runs. */
  get pid(): number | null {
    return this.reader?.pid ?? null
  }

  start(): void {
    void this.connect()
  }

  private async connect(): Promise<void> {
    this.retry = null
    const attempt = ++this.attempt
    const current = () => attempt === this.attempt && !this.stopped
    const handlers: ReaderHandlers = {
      onInfo: (info) => { if (current() && info.fps !== null) this.fps = info.fps },
      onFrame: (frame) => { if (current()) this.onFrame(frame) },
      onFailure: (error) => { if (current()) this.onFailure(error) },
    }
    let reader: Reader
    try {
      reader = await this.options.openReader(handlers)
    } catch (error) {
      if (current()) this.onFailure(error as ApiError)
      return
    }
    if (!current()) {
      await reader.stop()
      return
    }
    this.reader = reader
    reader.start()
  }

  private onFrame(frame: Frame): void {
    this.latest = frame
    this.recent.push(frame)
    while (this.recent.length > RECENT_FRAMES || frame.at - this.recent[0]!.at > RECENT_MS) this.recent.shift()
    this.size = frame.source
    if (this.status !== 'online') {
      this.error = null
      this.delay = this.options.reconnectMinMs
      this.setStatus('online')
    }
    for (const waiter of this.waiters.splice(0)) waiter.resolve()
    for (const waiter of this.nextWaiters.splice(0)) waiter(frame)
    this.options.onFrame(frame)
  }

  private onFailure(error: ApiError): void {
    this.reader = null
    this.bursting = false
    this.error = error
    this.latest = null
    this.recent = []
    this.setStatus('offline')
    for (const waiter of this.waiters.splice(0)) waiter.reject(error)
    for (const waiter of this.nextWaiters.splice(0)) waiter(null)
    if (this.stopped) return
    this.retry = setTimeout(() => { void this.connect() }, this.delay)
    this.delay = Math.min(this.delay * 2, this.options.reconnectMaxMs)
  }

  private setStatus(status: CameraStatus): void {
    const previous = this.status
    this.status = status
    if (previous !== status) this.options.onStatus(status, previous)
  }

  /**
   * Resolves when the camera has a frame; rejects with the source's error when the next
   * attempt fails (at once while it is offline), or after `timeoutMs`.
   */
  ready(timeoutMs: number): Promise<void> {
    if (this.status === 'online' && this.latest) return Promise.resolve()
    if (this.status === 'offline' && this.error) return Promise.reject(this.error)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter)
        reject(failure('CameraUnreachable', `no frame within ${timeoutMs} ms`))
      }, timeoutMs)
      const waiter = {
        resolve: () => { clearTimeout(timer); resolve() },
        reject: (error: ApiError) => { clearTimeout(timer); reject(error) },
      }
      this.waiters.push(waiter)
    })
  }

  /** The next frame the source delivers; null when none arrives within `timeoutMs` (or the source fails first). */
  nextFrame(timeoutMs: number): Promise<Frame | null> {
    if (this.stopped || timeoutMs <= 0) return Promise.resolve(null)
    return new Promise((resolve) => {
      const waiter = (frame: Frame | null) => { clearTimeout(timer); resolve(frame) }
      const timer = setTimeout(() => {
        this.nextWaiters = this.nextWaiters.filter((w) => w !== waiter)
        resolve(null)
      }, timeoutMs)
      this.nextWaiters.push(waiter)
    })
  }

  /**
   * Holds the reader at its burst rate (Reader.burst; docs/cameras-and-stream-tasks.md "Snapshots") until the
   * answered release is called.
   */
  holdBurst(): () => void {
    this.holds++
    this.updateBurst()
    let released = false
    return () => {
      if (released) return
      released = true
      this.holds--
      this.updateBurst()
    }
  }

  /** The reader at its burst rate for the next `ms` (longer if held), so that `recent` has the frames of that time. */
  arm(ms: number): void {
    this.armedUntil = Math.max(this.armedUntil, monotonicNow() + ms)
    if (this.armTimer) clearTimeout(this.armTimer)
    this.armTimer = setTimeout(() => { this.armTimer = null; this.updateBurst() }, this.armedUntil - monotonicNow())
    this.armTimer.unref?.()
    this.updateBurst()
  }

  private updateBurst(): void {
    const on = !this.stopped && (this.holds > 0 || monotonicNow() < this.armedUntil)
    if (on === this.bursting) return
    // A reader without a burst rate (or none running) stays as it is.
    if (this.reader?.burst?.(on)) this.bursting = on
    else if (!on) this.bursting = false
  }

  /** Reads the source again from scratch (its settings changed). */
  async restart(): Promise<void> {
    if (this.stopped) return
    if (this.retry) clearTimeout(this.retry)
    this.attempt++
    const reader = this.reader
    this.reader = null
    this.bursting = false
    await reader?.stop()
    if (!this.stopped) void this.connect()
  }

  /** Stops for good: no retry, the reader's process has exited when this resolves. */
  async stop(): Promise<void> {
    this.stopped = true
    this.attempt++
    for (const waiter of this.nextWaiters.splice(0)) waiter(null)
    if (this.retry) clearTimeout(this.retry)
    if (this.armTimer) clearTimeout(this.armTimer)
    this.recent = []
    const reader = this.reader
    this.reader = null
    await reader?.stop()
  }
}
