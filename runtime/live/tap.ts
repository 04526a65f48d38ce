import { ApiError } from '../../shared/errors/index.ts'
import type { Logger } from '../../shared/handler.ts'
import { CopyProcess, type CopyInput } from '../cameras/copy-process.ts'
import { codecOf, Fmp4Splitter, shiftedMoof, timescaleOf, type Fragment } from './fmp4.ts'

/**
 * Fragmented MP4 from ffmpeg without re-encoding: a fragment at every key frame and at
 * least every 100 ms (`-frag_duration`), so a frame reaches viewers about as soon as ffmpeg
 * has it, instead of once per group of pictures.
 */
export const LIVE_OUTPUT = [
  // -copyinkf: the output starts with the first packet read, whose time is the input's `start:`
  // (the fragments' decode times count from it; viewers still start at a key frame).
  '-map', '0:v:0', '-an', '-sn', '-dn', '-c:v', 'copy', '-copyinkf',
  '-f', 'mp4', '-movflags', 'frag_keyframe+empty_moov+default_base_moof', '-frag_duration', '100000', 'pipe:1',
]

/** Video since the last key frame kept for a joining viewer, at most this much. */
const GOP_CACHE_BYTES = 8 * 1024 * 1024

/** Writes a fragment with the viewer's own time line; false when it was refused. */
const send = (viewer: Viewer, state: { start: number }, fragment: Fragment) =>
  viewer.write(shiftedMoof(fragment.moof, state.start), fragment.mdat)

/** One viewer's end of the tap. */
export interface Viewer {
  /** Queues these bytes, all or none; false when the viewer's buffer is full (it then skips to the next key frame). */
  write(...parts: Buffer[]): boolean
  /** The stream ended (the upstream failed or the session ended); the player may reconnect. */
  end(): void
}

export interface TapOptions {
  binary: string
  input(): Promise<CopyInput>
  connectTimeoutMs: number
  stallTimeoutMs: number
  reconnectMinMs: number
  reconnectMaxMs: number
  log: Logger
}

/**
 * A camera's one upstream connection for live view (spec 4.10 Live stream): one ffmpeg
 * copying its H.264 into fragmented MP4, fanned out to every viewer. A joining viewer gets the
 * init segment and the fragments since the last key frame; a viewer that cannot keep up skips
 * to the next key frame rather than holding the others back.
 */
export class LiveTap {
  private readonly process: CopyProcess
  private splitter = new Fmp4Splitter()
  private gop: Fragment[] = []
  private gopBytes = 0
  /** Each viewer's state: skipping to a key frame, and the decode time its stream starts at. */
  private readonly viewers = new Map<Viewer, { waitingForKey: boolean; start: number }>()
  private waiters: { resolve(mimeType: string): void; reject(error: ApiError): void }[] = []
  mimeType: string | null = null
  /** The current run's timestamps are the device's reception times (CopyInput.wallclock). */
  private wallclock = false
  /**
   * The reception time of the run's first packet, ms since epoch (ffmpeg's `start:` of its
   * input): the MP4 muxer counts decode times from its first packet.
   */
  private startMs: number | null = null

  constructor(private readonly options: TapOptions) {
    this.process = new CopyProcess({
      binary: options.binary,
      input: async () => {
        const input = await options.input()
        this.wallclock = input.wallclock === true
        this.startMs = null
        return input
      },
      output: () => LIVE_OUTPUT,
      onLine: (line) => {
        const start = /^\s*Duration: .*, start: (-?\d+\.\d+)/.exec(line)
        if (start && this.startMs === null) this.startMs = Number(start[1]) * 1000
      },
      onStdout: (chunk) => this.onData(chunk),
      onCodec: (codec) => { if (codec !== 'h264') this.process.fail(new ApiError('LiveCodecUnsupported', { details: { codec } })) },
      onFailure: (error) => this.reset(error),
      firstOutputTimeoutMs: options.connectTimeoutMs, stallTimeoutMs: options.stallTimeoutMs,
      reconnectMinMs: options.reconnectMinMs, reconnectMaxMs: options.reconnectMaxMs, log: options.log,
    })
    this.process.start()
  }

  /** The ffmpeg process (tests check there is one per camera however many viewers). */
  get pid(): number | null {
    return this.process.pid
  }

  /** Resolves with the stream's MIME type once a key frame can be played; rejects with the upstream's error or after `timeoutMs`. */
  ready(timeoutMs: number): Promise<string> {
    if (this.mimeType && this.gop.length > 0) return Promise.resolve(this.mimeType)
    if (this.process.state === 'offline' && this.process.error) return Promise.reject(this.upstreamError(this.process.error))
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter)
        reject(new ApiError('LiveStreamUnavailable', { details: { reason: `no video within ${timeoutMs} ms` } }))
      }, timeoutMs)
      const waiter = {
        resolve: (mimeType: string) => { clearTimeout(timer); resolve(mimeType) },
        reject: (error: ApiError) => { clearTimeout(timer); reject(error) },
      }
      this.waiters.push(waiter)
    })
  }

  /** Adds a viewer: the init segment and the current group of pictures first. False until the stream is ready. */
  attach(viewer: Viewer): boolean {
    if (!this.splitter.init || this.gop.length === 0) return false
    const state = { waitingForKey: false, start: this.gop[0]!.decodeTime }
    this.viewers.set(viewer, state)
    viewer.write(this.splitter.init)
    for (const fragment of this.gop) send(viewer, state, fragment)
    return true
  }

  /**
   * Where a frame received at `pts` (ms since epoch, Frame.pts) is in this viewer's stream, in
   * seconds (the player's mediaTime); null unless the stream's timestamps are reception times.
   */
  mediaTime(viewer: Viewer, pts: number): number | null {
    const state = this.viewers.get(viewer)
    const timescale = this.wallclock && this.splitter.init ? timescaleOf(this.splitter.init) : null
    if (!state || !timescale || this.startMs === null) return null
    return (pts - this.startMs) / 1000 - state.start / timescale
  }

  detach(viewer: Viewer): void {
    this.viewers.delete(viewer)
  }

  private onData(chunk: Buffer): void {
    let fragments: Fragment[]
    try {
      fragments = this.splitter.push(chunk)
    } catch (error) {
      this.process.fail(new ApiError('LiveStreamUnavailable', { details: { reason: (error as Error).message } }))
      return
    }
    for (const fragment of fragments) this.onFragment(fragment)
  }

  private onFragment(fragment: Fragment): void {
    if (fragment.keyframe) {
      this.gop = []
      this.gopBytes = 0
    }
    // A group of pictures larger than the cache is not kept: joiners wait for the next key frame.
    if (this.gop.length > 0 || fragment.keyframe) {
      this.gop.push(fragment)
      this.gopBytes += fragment.moof.length + fragment.mdat.length
      if (this.gopBytes > GOP_CACHE_BYTES) this.gop = []
    }
    if (!this.mimeType && this.splitter.init && fragment.keyframe) {
      const codec = codecOf(this.splitter.init)
      this.mimeType = `video/mp4; codecs="${codec ?? 'avc1.42e01e'}"`
      for (const waiter of this.waiters.splice(0)) waiter.resolve(this.mimeType)
    }
    for (const [viewer, state] of this.viewers) {
      if (state.waitingForKey && !fragment.keyframe) continue
      state.waitingForKey = !send(viewer, state, fragment)
    }
  }

  private upstreamError(error: ApiError): ApiError {
    return error.id === 'LiveCodecUnsupported' ? error : new ApiError('LiveStreamUnavailable', { details: { reason: String(error.item.details.reason ?? error.item.messageKey) } })
  }

  /** The upstream failed: viewers' streams end (timestamps restart with the next run), joiners wait for it. */
  private reset(error: ApiError): void {
    this.splitter = new Fmp4Splitter()
    this.gop = []
    this.gopBytes = 0
    this.mimeType = null
    for (const viewer of this.viewers.keys()) viewer.end()
    this.viewers.clear()
    for (const waiter of this.waiters.splice(0)) waiter.reject(this.upstreamError(error))
  }

  /** Reads the camera's source again (it changed). */
  async restart(): Promise<void> {
    this.reset(new ApiError('LiveStreamUnavailable', { details: { reason: 'the camera\'s source changed' } }))
    await this.process.restart()
  }

  async stop(): Promise<void> {
    this.reset(new ApiError('LiveStreamUnavailable', { details: { reason: 'live view ended' } }))
    await this.process.stop()
  }
}
