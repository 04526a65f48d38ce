import { monotonicNow } from '../../shared/clock.ts'
import type { Config } from '../../shared/config.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { EventsService } from '../../shared/events/types.ts'
import type { Logger } from '../../shared/handler.ts'
import type { CameraStatus } from '../../shared/cameras/types.ts'
import { urlWithCredentials } from './url.ts'
import { KeyedMutex } from '../keyed-mutex.ts'
import { CameraChannel } from './channel.ts'
import type { CopyInput } from './copy-process.ts'
import { CredentialRelay } from './credential-relay.ts'
import { failure } from './failure.ts'
import { ffmpegBinary, inputArgs, rtspTimeoutOption, withResolvedHost, type InputSpec } from './ffmpeg.ts'
import { FullFrameUnavailable, fullFrameAfter, type FullFrame } from './full-frame.ts'
import { FfmpegReader, type Frame, type Reader, type ReaderHandlers } from './reader.ts'
import { cameraSources } from './sources/index.ts'
import type { CameraRow, OpenContext } from './sources/types.ts'

/** One consumer's frames of a camera (`openStream`). */
export interface CameraStream {
  /** Its state machine: status, error and source rate. */
  channel: CameraChannel
  stop(): Promise<void>
}

/**
 * The cameras' connection state machines (runtime/cameras/channel.ts): one per camera, and one
 * per consumer stream, each reading through the reader its source plugin opens
 * (runtime/cameras/sources/). Status changes of a camera's own channel go out as
 * `camera.online` / `camera.offline` events.
 */
export class CameraChannels {
  readonly open = new Map<string, { row: CameraRow; channel: CameraChannel }>()
  /** Consumer streams per camera: camera id → consumer id → channel. */
  readonly streams = new Map<string, Map<string, CameraChannel>>()
  private readonly binary: string
  private rtspTimeoutOption: Promise<string> | null = null
  /** Source URLs with credentials reach ffmpeg through it, not through its command line. */
  private readonly relay = new CredentialRelay()
  /** The last full-resolution frame search per camera (fullFrame), kept for its analysed frame: at most one in flight. */
  private readonly fullFrames = new Map<string, { analysed: Frame; frame: Promise<FullFrame> }>()
  /** One full-resolution search per camera at a time, in the order they were asked for. */
  private readonly searches = new KeyedMutex()

  constructor(private readonly options: { config: Config; log: Logger; events: EventsService }) {
    this.binary = ffmpegBinary(options.config.ffmpegPath)
  }

  private get config() {
    return this.options.config
  }

  /** Stops every reader; resolves when their processes have exited (device stop). */
  async stop(): Promise<void> {
    const all = [...this.open.values()].map(({ channel }) => channel)
    for (const streams of this.streams.values()) all.push(...streams.values())
    this.open.clear()
    this.streams.clear()
    await Promise.all(all.map((channel) => channel.stop()))
    await this.relay.close()
  }

  /** A channel for a camera row, not started; only once registered does it speak for the camera. */
  channel(row: CameraRow): CameraChannel {
    const channel: CameraChannel = new CameraChannel({
      // The camera's own reader: raised to the burst rate while a snapshot waits for its next frame (fullFrame).
      openReader: (handlers) => this.reader(row, handlers, this.config.cameraMonitorFps, null, this.config.snapshotFullResolution ? this.config.snapshotBurstFps : null),
      onFrame: () => {},
      reconnectMinMs: this.config.cameraReconnectMinMs,
      reconnectMaxMs: this.config.cameraReconnectMaxMs,
      // Only the camera's registered channel speaks for it (not one still being verified).
      onStatus: (status) => { if (this.open.get(row.cameraId)?.channel === channel) this.announce(row.cameraId, status) },
    })
    return channel
  }

  /** Starts a channel and resolves at its first frame, or throws the source's error. */
  async verify(channel: CameraChannel): Promise<void> {
    channel.start()
    await channel.ready(this.config.cameraConnectTimeoutMs + 2000)
  }

  /** Makes a channel the camera's (starting it unless it already runs) and announces its status. */
  register(row: CameraRow, channel: CameraChannel, start: boolean): void {
    this.open.set(row.cameraId, { row, channel })
    if (start) channel.start()
    else this.announce(row.cameraId, channel.status)
  }

  async close(cameraId: string): Promise<void> {
    const open = this.open.get(cameraId)
    this.open.delete(cameraId)
    this.fullFrames.delete(cameraId)
    await open?.channel.stop()
  }

  /** Frames of a camera at `fps` for one consumer (CameraService.openStream). */
  async openStream(row: CameraRow, consumer: string, options: { fps: number; maxSide?: number | null; onFrame(frame: Frame): void; onStatus(status: CameraStatus, error: ApiError | null): void }): Promise<CameraStream> {
    const { cameraId } = row
    const channel: CameraChannel = new CameraChannel({
      // The camera's current source: an update of the camera restarts this stream on it.
      openReader: (handlers) => this.reader(this.open.get(cameraId)?.row ?? row, handlers, options.fps, options.maxSide ?? null),
      onFrame: options.onFrame,
      reconnectMinMs: this.config.cameraReconnectMinMs,
      reconnectMaxMs: this.config.cameraReconnectMaxMs,
      onStatus: (status) => options.onStatus(status, channel.error),
    })
    const streams = this.streams.get(cameraId) ?? new Map<string, CameraChannel>()
    this.streams.set(cameraId, streams)
    await streams.get(consumer)?.stop()
    streams.set(consumer, channel)
    channel.start()
    return {
      channel,
      stop: async () => {
        if (streams.get(consumer) === channel) streams.delete(consumer)
        await channel.stop()
      },
    }
  }

  /**
   * The camera's first frame at its own size at or after `analysed` (an analysed frame of a
   * stream task), for a snapshot (docs/cameras-and-stream-tasks.md "Snapshots"): from the
   * camera's own reader, which decodes it at its size for status and capture (no decode of its
   * own), raised to its burst rate while the search waits. At most one search per camera in
   * flight: one for the same frame shares it (also once it ended: a search started with the
   * detection, Snapshots.prepare), one for another frame starts once it ends (each ends by its
   * own frame's deadline, SNAPSHOT_MAX_SKEW_MS after it, so a line of them stays short).
   * Throws FullFrameUnavailable with the reason.
   */
  fullFrame(cameraId: string, analysed: Frame): Promise<FullFrame> {
    const open = this.open.get(cameraId)
    if (!open) return Promise.reject(new FullFrameUnavailable('the camera is not open'))
    const refused = cameraSources[open.row.sourceType].noFullFrame
    if (refused) return Promise.reject(new FullFrameUnavailable(refused))
    const last = this.fullFrames.get(cameraId)
    if (last?.analysed === analysed) return last.frame
    const search = { analysed, frame: this.searches.run(cameraId, () => fullFrameAfter(open.channel, analysed, { maxSkewMs: this.config.snapshotMaxSkewMs, now: monotonicNow })) }
    this.fullFrames.set(cameraId, search)
    return search.frame
  }

  /** CameraService.armFullFrames: the camera's own reader at its burst rate for the next `ms`, keeping its last frames. */
  armFullFrames(cameraId: string, ms: number): void {
    const open = this.open.get(cameraId)
    if (open && !cameraSources[open.row.sourceType].noFullFrame) open.channel.arm(ms)
  }

  /** CameraService.copyInput: the source plugin's stream to copy, or StreamSourceUnsupported. */
  async copyInput(row: CameraRow, copy: { wallclock?: boolean }): Promise<CopyInput> {
    const context = await this.context(row, null, this.config.cameraMonitorFps, null)
    const plugin = cameraSources[row.sourceType]
    if (!plugin.copy) throw new ApiError('StreamSourceUnsupported', { details: { cameraId: row.cameraId, sourceType: row.sourceType } })
    return plugin.copy(context, copy.wallclock)
  }

  /** Emits `camera.online` / `camera.offline` (spec 6) for a status change of an added camera. */
  private announce(cameraId: string, status: CameraStatus): void {
    const open = this.open.get(cameraId)
    if (!open || status === 'connecting') return
    const { row, channel } = open
    const log = this.options.log
    const emitted = status === 'online'
      ? this.options.events.emit('camera.online', { cameraId, cameraName: row.cameraName, width: channel.size?.width ?? null, height: channel.size?.height ?? null, fps: channel.fps })
      : this.options.events.emit('camera.offline', { cameraId, cameraName: row.cameraName, messageKey: channel.error?.item.messageKey ?? null, reason: channel.error?.item.details.reason ?? null })
    if (status === 'online') log.info({ cameraId, ffmpegPid: channel.pid }, 'camera online')
    else log.warn({ cameraId, messageKey: channel.error?.item.messageKey, reason: channel.error?.item.details.reason }, 'camera offline; reconnecting')
    emitted.catch((error: Error) => log.error({ err: error.message, cameraId }, 'camera event not written'))
  }

  private async reader(row: CameraRow, handlers: ReaderHandlers, fps = this.config.cameraMonitorFps, maxSide: number | null = null, burstFps: number | null = null): Promise<Reader> {
    return cameraSources[row.sourceType].open(await this.context(row, handlers, fps, maxSide, burstFps))
  }

  /** What a source plugin opens a reader or a copy with. */
  private async context(row: CameraRow, handlers: ReaderHandlers | null, fps: number, maxSide: number | null, burstFps: number | null = null): Promise<OpenContext> {
    // The source's rate as last seen: a reader asking for all of it keeps every frame (ffmpeg.ts timedVideoFilter).
    const sourceFps = this.open.get(row.cameraId)?.channel.fps ?? null
    const timing = { fps, maxSide, sourceFps, burstFps, connectTimeoutMs: this.config.cameraConnectTimeoutMs, stallTimeoutMs: this.config.cameraStallTimeoutMs }
    const option = await this.timeoutOption()
    return {
      row, timing, dataPath: this.config.dataPath, maxBytes: this.config.maxEncodedImageBytes, handlers: handlers!,
      ffmpeg: (spec) => new FfmpegReader(this.binary, spec, { ...timing, rtspTimeoutOption: option }, row.password, handlers!),
      urlInput: (kind) => this.urlInput(kind, row),
      args: (spec, wallclock) => inputArgs(spec, { timeoutMs: this.config.cameraConnectTimeoutMs, rtspTimeoutOption: option, wallclock }),
    }
  }

  /** A URL source for ffmpeg: the URL itself, or, when it has credentials, a relay ticket (credential-relay.ts). */
  private async urlInput(sourceType: string, row: CameraRow): Promise<InputSpec> {
    const url = await this.resolved(urlWithCredentials(row.url!, row.username, row.password))
    if (!row.username && !row.password) return { sourceType, input: url }
    const ticket = await this.relay.ticket(url)
    return { sourceType, input: ticket.url, ticket }
  }

  /** The RTSP timeout option of this ffmpeg binary, asked once. */
  private timeoutOption(): Promise<string> {
    this.rtspTimeoutOption ??= rtspTimeoutOption(this.binary, this.config.cameraConnectTimeoutMs)
    return this.rtspTimeoutOption.catch((error: Error) => { this.rtspTimeoutOption = null; throw failure('CameraSourceFailed', error.message) })
  }

  private resolved(url: string): Promise<string> {
    return withResolvedHost(url, this.config.cameraConnectTimeoutMs).catch((error: Error) => { throw failure('CameraUnreachable', error.message) })
  }
}
