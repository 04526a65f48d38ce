import { spawn, type ChildProcess } from 'node:child_process'
import { ApiError } from '../../shared/errors/index.ts'
import type { ErrorId } from '../../shared/errors/catalogue.ts'
import { redactText } from './url.ts'
import { failure } from './failure.ts'
import { burstCommand, classifyExit, classifyFailure, errorLine, isShowinfo, parseInputStream, parseOutputSize, parseShowinfo, readerArgs, timedSource, type InputSpec } from './ffmpeg.ts'
import { monotonicNow } from '../../shared/clock.ts'

/** One decoded frame: packed RGB, 3 bytes per pixel, at the reader's analysis size. */
export interface Frame {
  rgb: Buffer
  width: number
  height: number
  /** The camera's own picture size (larger than the frame when the reader shrinks it). */
  source: { width: number; height: number }
  /** When it was decoded, ms since epoch: the time its events and snapshots are dated with. */
  time: number
  /**
   * When it was decoded on the monotonic clock (shared/clock.ts `monotonicNow()`), ms: what
   * stream tasks time with (the gate's intervals, tracking, dwell, cooldowns), so a wall-clock
   * step neither ends the objects in view nor keeps one from leaving (docs/system.md "Clocks").
   */
  at: number
  /**
   * When the device received it, ms since epoch: the timestamp the same frame has in the
   * camera's live view (docs/recording-and-live-view.md "Boxes on the frame shown"); absent
   * for sources without one (files, USB, HTTP).
   */
  pts?: number | null
}

export interface ReaderHandlers {
  /** The source's frame rate, once known. */
  onInfo(info: { fps: number | null; codec: string | null }): void
  onFrame(frame: Frame): void
  /** Called once, when the reader stops by itself; `stop()` never calls it. */
  onFailure(error: ApiError): void
}

export interface Reader {
  start(): void
  /** Stops reading; resolves when its process (if any) has exited. */
  stop(): Promise<void>
  readonly pid: number | null
  /**
   * Raises the rate to the burst rate (true) or back (false), when the reader has one
   * (ReaderTiming.burstFps; docs/cameras-and-stream-tasks.md "Snapshots"); returns whether it has.
   */
  burst?(on: boolean): boolean
}

export interface ReaderTiming {
  fps: number
  /** Frames are shrunk so that their longest side is at most this (null: the source's size). */
  maxSide: number | null
  /** The source's frame rate when known (a reader at that rate keeps every frame). */
  sourceFps?: number | null
  /** A rate the reader can be raised to for a while (`burst`), RTSP sources only; null: none. */
  burstFps?: number | null
  connectTimeoutMs: number
  stallTimeoutMs: number
}

export { failure } from './failure.ts'

/**
 * Reads a source through one ffmpeg child: raw RGB frames on its stdout, its messages on
 * stderr (kept redacted: they quote the URL with its credentials). A watchdog ends a child
 * that delivers no first frame within the connect timeout, or no new frame within the
 * stall timeout, so nothing waits forever on a silent source.
 */
export class FfmpegReader implements Reader {
  private child: ChildProcess | null = null
  private stopped = false
  private failed = false
  private lines: string[] = []
  private pending: Buffer[] = []
  private pendingBytes = 0
  private size: { width: number; height: number } | null = null
  private sourceSize: { width: number; height: number } | null = null
  private lastProgress = 0
  private hadFrame = false
  /** ffmpeg printed the source's stream: the source answered. */
  private describedInput = false
  private watchdog: NodeJS.Timeout | null = null
  private exited: Promise<void> = Promise.resolve()
  /** Frames get their timestamp from ffmpeg's showinfo lines on stderr, paired by number. */
  private readonly timed: boolean
  private framesOut = 0
  private readonly ptsOf = new Map<number, number>()
  private held: { frame: Frame; n: number }[] = []

  constructor(
    private readonly binary: string,
    private readonly spec: InputSpec,
    private readonly timing: ReaderTiming & { rtspTimeoutOption: string },
    private readonly password: string | null,
    private readonly handlers: ReaderHandlers,
  ) {
    this.timed = timedSource(spec.sourceType)
  }

  get pid(): number | null {
    return this.child?.pid ?? null
  }

  /** The source is timed (RTSP) and a burst rate above the reader's is asked for: ffmpeg takes commands on stdin. */
  private get burstable(): boolean {
    return this.timed && !!this.timing.burstFps && this.timing.burstFps > this.timing.fps
  }

  burst(on: boolean): boolean {
    const stdin = this.child?.stdin
    if (!this.burstable || !stdin || stdin.destroyed || this.stopped || this.failed) return false
    stdin.write(burstCommand(on))
    return true
  }

  start(): void {
    this.framesOut = 0
    this.ptsOf.clear()
    this.held = []
    const args = readerArgs(this.spec, { fps: this.timing.fps, sourceFps: this.timing.sourceFps ?? null, maxSide: this.timing.maxSide, burstFps: this.burstable ? this.timing.burstFps : null, timeoutMs: this.timing.connectTimeoutMs, rtspTimeoutOption: this.timing.rtspTimeoutOption })
    const child = spawn(this.binary, args, { stdio: [this.burstable ? 'pipe' : 'ignore', 'pipe', 'pipe'] })
    // A write after ffmpeg exited fails with EPIPE: its exit is handled on 'close'.
    child.stdin?.on('error', () => {})
    this.child = child
    if (child.pid !== undefined) this.spec.ticket?.bind(child.pid)
    child.once('close', () => this.spec.ticket?.close())
    this.lastProgress = monotonicNow()
    const startedAt = this.lastProgress
    this.exited = new Promise((resolve) => child.once('close', () => resolve()))
    child.once('error', (error) => this.fail('CameraSourceFailed', `ffmpeg could not start: ${error.message}`))
    child.once('close', (code, signal) => {
      this.clearWatchdog()
      if (this.stopped || this.failed) return
      const last = errorLine(this.lines)
      const run = { describedInput: this.describedInput, elapsedMs: monotonicNow() - startedAt, connectTimeoutMs: this.timing.connectTimeoutMs }
      this.fail(classifyExit(this.lines.join('\n'), run), signal ? `ffmpeg ended by ${signal}` : last ?? (code === 0 ? 'the stream ended' : `ffmpeg ended (exit code ${code})`))
    })
    let partial = ''
    child.stderr!.setEncoding('utf8')
    child.stderr!.on('data', (text: string) => {
      const parts = (partial + text).split(/\r?\n|\r/)
      partial = parts.pop() ?? ''
      for (const raw of parts) this.onMessage(redactText(raw, this.password))
    })
    child.stdout!.on('data', (chunk: Buffer) => this.onData(chunk))
    this.watchdog = setInterval(() => this.checkProgress(), Math.min(1000, this.timing.connectTimeoutMs / 2))
  }

  private onMessage(line: string): void {
    if (!line.trim()) return
    if (isShowinfo(line)) {
      const info = parseShowinfo(line)
      if (info) {
        this.ptsOf.set(info.n, info.pts / 1000)
        this.release()
      }
      return
    }
    this.lines.push(line)
    if (this.lines.length > 40) this.lines.shift()
    if (!this.size) {
      const input = parseInputStream(line)
      if (input && !line.includes('rawvideo')) {
        this.describedInput = true
        this.handlers.onInfo(input)
        if (input.width && input.height) this.sourceSize = { width: input.width, height: input.height }
      }
      this.size = parseOutputSize(line)
    }
  }

  private onData(chunk: Buffer): void {
    if (!this.size || this.stopped || this.failed) return
    this.pending.push(chunk)
    this.pendingBytes += chunk.length
    const frameBytes = this.size.width * this.size.height * 3
    while (this.pendingBytes >= frameBytes) {
      const all = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes)
      const rgb = Buffer.from(all.subarray(0, frameBytes))
      const rest = all.subarray(frameBytes)
      this.pending = rest.length > 0 ? [rest] : []
      this.pendingBytes = rest.length
      this.hadFrame = true
      this.lastProgress = monotonicNow()
      const frame: Frame = { rgb, width: this.size.width, height: this.size.height, source: this.sourceSize ?? this.size, time: Date.now(), at: monotonicNow() }
      if (!this.timed) this.handlers.onFrame(frame)
      else {
        this.held.push({ frame, n: this.framesOut++ })
        this.release()
      }
    }
  }

  /**
   * Hands on the frames whose timestamp arrived (stdout and stderr are separate pipes, either
   * may come first); one that waits behind two more goes on without one.
   */
  private release(): void {
    while (this.held.length > 0 && (this.ptsOf.has(this.held[0]!.n) || this.held.length > 2)) {
      const { frame, n } = this.held.shift()!
      frame.pts = this.ptsOf.get(n) ?? null
      this.ptsOf.delete(n)
      if (this.stopped || this.failed) continue
      this.handlers.onFrame(frame)
    }
    // Timestamps of frames already handed on (never the case in order) are not kept.
    if (this.ptsOf.size > 8) for (const n of this.ptsOf.keys()) if (n < this.framesOut - 8) this.ptsOf.delete(n)
  }

  private checkProgress(): void {
    const limit = this.hadFrame ? this.timing.stallTimeoutMs : this.timing.connectTimeoutMs
    if (monotonicNow() - this.lastProgress <= limit) return
    const known = classifyFailure(this.lines.join('\n'))
    const last = errorLine(this.lines)
    this.fail(this.hadFrame ? 'CameraSourceFailed' : known === 'CameraSourceFailed' ? 'CameraUnreachable' : known,
      this.hadFrame ? `no frame for ${limit} ms` : `no frame within ${limit} ms${last ? ` (${last})` : ''}`)
  }

  private fail(id: ErrorId, reason: string): void {
    if (this.stopped || this.failed) return
    this.failed = true
    this.clearWatchdog()
    this.kill()
    this.handlers.onFailure(failure(id, reason))
  }

  private clearWatchdog(): void {
    if (this.watchdog) clearInterval(this.watchdog)
    this.watchdog = null
  }

  private kill(): void {
    const child = this.child
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    // ffmpeg blocked in a read may ignore SIGTERM for a while.
    const hard = setTimeout(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') }, 2000)
    hard.unref()
    child.once('close', () => clearTimeout(hard))
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.clearWatchdog()
    this.kill()
    // Also when it never started; otherwise its process's exit voids it.
    this.spec.ticket?.close()
    await this.exited
  }
}
