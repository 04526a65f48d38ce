import { randomUUID } from 'node:crypto'
import { copyFile, link, mkdir, readFile, readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { asc, count, eq } from 'drizzle-orm'
import type { Config } from '../../shared/config.ts'
import type { Db } from '../../shared/db/client.ts'
import { containsText } from '../../shared/db/like.ts'
import { cameras } from '../../shared/db/schema/index.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { EventsService } from '../../shared/events/types.ts'
import type { Clock, Identity, Logger } from '../../shared/handler.ts'
import type { UploadLease, UploadService } from '../../shared/uploads/index.ts'
import type { CamerasService, CameraStatus, CameraView, Capture, SourceType, UsbDevice } from '../../shared/cameras/types.ts'
import type { AddCameraInput, UpdateCameraInput } from '../../shared/cameras/inputs.ts'
import { parseSourceUrl, redactedUrl, urlWithCredentials, USB_DEVICE } from '../../shared/cameras/url.ts'
import { toFullPicture } from '../tasks/full-picture.ts'
import { frameJpeg } from '../system/image-quality.ts'
import type { ImageQualityService } from '../../shared/system/types.ts'
import { CameraChannel } from './channel.ts'
import type { CopyInput } from './copy-process.ts'
import { CredentialRelay } from './credential-relay.ts'
import { ffmpegBinary, inputArgs, rtspTimeoutOption, withResolvedHost, type InputSpec } from './ffmpeg.ts'
import { FullFrameUnavailable, fullFrameAfter, type FullFrame } from './full-frame.ts'
import { failure, FfmpegReader, httpSourceKind, SnapshotReader, type Frame, type Reader, type ReaderHandlers } from './reader.ts'

type CameraRow = typeof cameras.$inferSelect

/** One consumer's frames of a camera (`openStream`). */
export interface CameraStream {
  /** Its state machine: status, error and source rate. */
  channel: CameraChannel
  stop(): Promise<void>
}

export interface CameraServiceOptions {
  db: Db
  config: Config
  clock: Clock
  log: Logger
  events: EventsService
  uploads: UploadService
  /** JPEG quality and size cap of captures (System image quality, read at every capture). */
  imageQuality: Pick<ImageQualityService, 'current'>
}

const VIDEO_PURPOSE = 'video'
const invalid = (field: string, reason: string) =>
  new ApiError('CameraUrlInvalid', { details: { field, reason }, msgText: `${field}: ${reason}` })

/**
 * `ctx.cameras` (spec 4.10 Camera): the camera rows and one connection state machine per
 * camera, each reading its source through its own reader (an ffmpeg child, or HTTP polling
 * for snapshot URLs). Status changes go out as `camera.online` / `camera.offline` events.
 */
export class CameraService implements CamerasService {
  private readonly channels = new Map<string, { row: CameraRow; channel: CameraChannel }>()
  /** Consumer streams per camera: camera id → consumer id → channel. */
  private readonly streams = new Map<string, Map<string, CameraChannel>>()
  private readonly removeListeners: ((cameraId: string, consumers: string[]) => void)[] = []
  private readonly sourceListeners: ((cameraId: string) => void)[] = []
  private readonly binary: string
  private rtspTimeoutOption: Promise<string> | null = null
  /** Source URLs with credentials reach ffmpeg through it, not through its command line. */
  private readonly relay = new CredentialRelay()
  /** The last full-resolution frame search per camera (fullFrame), kept for its analysed frame: at most one in flight. */
  private readonly fullFrames = new Map<string, { analysed: Frame; frame: Promise<FullFrame>; done: boolean }>()

  constructor(private readonly options: CameraServiceOptions) {
    this.binary = ffmpegBinary(options.config.ffmpegPath)
  }

  private get config() {
    return this.options.config
  }

  /** Starts a channel for every stored camera (device start). */
  async start(): Promise<void> {
    for (const row of await this.options.db.select().from(cameras)) this.register(row, this.channel(row), true)
  }

  /** Stops every reader; resolves when their processes have exited (device stop). */
  async stop(): Promise<void> {
    const all = [...this.channels.values()].map(({ channel }) => channel)
    for (const streams of this.streams.values()) all.push(...streams.values())
    this.channels.clear()
    this.streams.clear()
    await Promise.all(all.map((channel) => channel.stop()))
    await this.relay.close()
  }

  async add(input: AddCameraInput, identity: Identity): Promise<string> {
    const cameraId = randomUUID()
    const now = this.options.clock.now()
    let lease: UploadLease | null = null
    const source = this.sourceOf(input.sourceType, input)
    let videoFile: string | null = null
    let videoName: string | null = null
    if (input.sourceType === 'file') {
      lease = await this.options.uploads.lease(input.uploadId!, identity, VIDEO_PURPOSE)
      try {
        ;({ videoFile } = await this.storeVideo(cameraId, lease))
        videoName = lease.originalFilename
      } catch (error) {
        await lease.abandon()
        throw error
      }
    }
    const row: CameraRow = {
      cameraId, cameraName: input.cameraName, sourceType: input.sourceType, ...source, videoFile, videoName,
      createdBy: identity.accountName, createdAt: now, updatedAt: now,
    }
    const channel = this.channel(row)
    try {
      if (input.verify !== false) await this.verify(channel)
      await this.options.db.insert(cameras).values(row)
    } catch (error) {
      await channel.stop()
      await lease?.abandon()
      if (videoFile) await rm(path.join(this.config.dataPath, videoFile), { force: true })
      throw error
    }
    await lease?.commit()
    this.register(row, channel, input.verify === false)
    this.options.log.info({ cameraId, sourceType: row.sourceType, url: this.shownUrl(row) }, 'camera added')
    return cameraId
  }

  async update(input: UpdateCameraInput, identity: Identity): Promise<void> {
    const current = this.channels.get(input.cameraId)?.row ?? (await this.row(input.cameraId))
    const now = this.options.clock.now()
    const sourceChanged = input.url !== undefined || input.uploadId !== undefined || input.device !== undefined ||
      input.username !== undefined || input.password !== undefined
    if (!sourceChanged) {
      const row = { ...current, cameraName: input.cameraName ?? current.cameraName, updatedAt: now }
      await this.options.db.update(cameras).set({ cameraName: row.cameraName, updatedAt: now }).where(eq(cameras.cameraId, row.cameraId))
      const open = this.channels.get(row.cameraId)
      if (open) open.row = row
      return
    }
    // Fields not sent keep their value: credentials come from the fields, else the new URL, else stay.
    const source = this.sourceOf(current.sourceType, {
      url: input.url ?? current.url ?? undefined,
      device: input.device ?? current.device ?? undefined,
      uploadId: input.uploadId,
      username: input.username,
      password: input.password,
    }, { username: current.username, password: current.password, keepVideo: current.sourceType === 'file' && input.uploadId === undefined })
    let lease: UploadLease | null = null
    let video = { videoFile: current.videoFile, videoName: current.videoName }
    if (current.sourceType === 'file' && input.uploadId !== undefined) {
      lease = await this.options.uploads.lease(input.uploadId, identity, VIDEO_PURPOSE)
      try {
        video = { videoFile: (await this.storeVideo(`${current.cameraId}-${now}`, lease)).videoFile, videoName: lease.originalFilename }
      } catch (error) {
        await lease.abandon()
        throw error
      }
    }
    const row: CameraRow = { ...current, ...source, ...video, cameraName: input.cameraName ?? current.cameraName, updatedAt: now }
    const channel = this.channel(row)
    try {
      if (input.verify !== false) await this.verify(channel)
      await this.options.db.update(cameras).set(row).where(eq(cameras.cameraId, row.cameraId))
    } catch (error) {
      await channel.stop()
      await lease?.abandon()
      if (video.videoFile !== current.videoFile) await rm(path.join(this.config.dataPath, video.videoFile!), { force: true })
      throw error
    }
    await lease?.commit()
    await this.close(row.cameraId)
    this.register(row, channel, input.verify === false)
    await Promise.all([...(this.streams.get(row.cameraId)?.values() ?? [])].map((stream) => stream.restart()))
    for (const listener of this.sourceListeners) listener(row.cameraId)
    if (current.videoFile && current.videoFile !== row.videoFile) await rm(path.join(this.config.dataPath, current.videoFile), { force: true })
  }

  async remove(cameraId: string, force = false): Promise<void> {
    const row = this.channels.get(cameraId)?.row ?? (await this.row(cameraId))
    const consumers = this.consumers(cameraId)
    if (consumers.length > 0 && !force) throw new ApiError('CameraInUse', { details: { cameraId, taskIds: consumers } })
    await Promise.all([...(this.streams.get(cameraId)?.values() ?? [])].map((channel) => channel.stop()))
    this.streams.delete(cameraId)
    for (const listener of this.removeListeners) listener(cameraId, consumers)
    await this.close(cameraId)
    await this.options.db.delete(cameras).where(eq(cameras.cameraId, cameraId))
    if (row.videoFile) await rm(path.join(this.config.dataPath, row.videoFile), { force: true })
    this.options.log.info({ cameraId }, 'camera deleted')
  }

  async page(query: { pageNum: number; pageSize: number; cameraName?: string }): Promise<{ total: number; rows: CameraView[] }> {
    const where = query.cameraName ? containsText(cameras.cameraName, query.cameraName) : undefined
    const [total] = await this.options.db.select({ n: count() }).from(cameras).where(where)
    const rows = await this.options.db.select().from(cameras).where(where).orderBy(asc(cameras.createdAt), asc(cameras.cameraId))
      .limit(query.pageSize).offset((query.pageNum - 1) * query.pageSize)
    return { total: total?.n ?? 0, rows: rows.map((row) => this.view(row)) }
  }

  async capture(cameraId: string): Promise<Capture> {
    const open = this.channels.get(cameraId)
    if (!open) throw new ApiError('CameraNotFound', { details: { cameraId } })
    await open.channel.ready(this.config.cameraConnectTimeoutMs + 2000)
    const frame = open.channel.latest!
    const jpeg = await frameJpeg(frame, this.options.imageQuality.current().capture)
    return { picture: await toFullPicture(jpeg, this.config, this.options.clock.now()), width: frame.width, height: frame.height, timestamp: frame.time }
  }

  /**
   * The camera's first frame at its own size at or after `analysed` (an analysed frame of a
   * stream task), for a snapshot (docs/cameras-and-stream-tasks.md "Snapshots"): from the
   * camera's own reader, which decodes it at its size for status and capture (no decode of its
   * own), raised to its burst rate while the search waits. At most one search per camera in
   * flight: one for the same frame shares it (also once it ended: a search started with the
   * detection, Snapshots.prepare), one for another frame is refused while it runs.
   * Throws FullFrameUnavailable with the reason.
   */
  fullFrame(cameraId: string, analysed: Frame): Promise<FullFrame> {
    const open = this.channels.get(cameraId)
    if (!open) return Promise.reject(new FullFrameUnavailable('the camera is not open'))
    // Each reader of a video file plays it from its own start: the camera's reader shows another moment.
    if (open.row.sourceType === 'file') return Promise.reject(new FullFrameUnavailable("a file camera's readers each play the video from their own start"))
    const last = this.fullFrames.get(cameraId)
    if (last?.analysed === analysed) return last.frame
    if (last && !last.done) return Promise.reject(new FullFrameUnavailable('a full-resolution capture of this camera is already in flight'))
    const search = { analysed, done: false, frame: fullFrameAfter(open.channel, analysed, { maxSkewMs: this.config.snapshotMaxSkewMs, now: () => Date.now() }) }
    search.frame.then(() => { search.done = true }, () => { search.done = true })
    this.fullFrames.set(cameraId, search)
    return search.frame
  }

  /**
   * The camera's own reader at its burst rate for the next `ms`, keeping its last frames: a detection
   * of a stream task may soon want a snapshot (docs/cameras-and-stream-tasks.md "Snapshots").
   */
  armFullFrames(cameraId: string, ms: number): void {
    const open = this.channels.get(cameraId)
    if (open && open.row.sourceType !== 'file') open.channel.arm(ms)
  }

  /** V4L2 capture devices (`/dev/videoN`) with their driver's name; empty without any. */
  async usbList(): Promise<UsbDevice[]> {
    const names = (await readdir('/dev').catch(() => [] as string[])).filter((name) => /^video\d+$/.test(name))
    const devices: UsbDevice[] = []
    for (const name of names.sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)))) {
      const label = await readFile(`/sys/class/video4linux/${name}/name`, 'utf8').catch(() => name)
      devices.push({ device: `/dev/${name}`, name: label.trim() })
    }
    return devices
  }

  /**
   * Frames of a camera at `fps` for one consumer (a stream task): a reader of its own at that
   * rate, reconnecting like the camera's. While any consumer is open, `remove` refuses the
   * camera unless forced (then the consumers' streams end).
   */
  async openStream(cameraId: string, consumer: string, options: { fps: number; maxSide?: number | null; onFrame(frame: Frame): void; onStatus(status: CameraStatus, error: ApiError | null): void }): Promise<CameraStream> {
    const row = this.channels.get(cameraId)?.row ?? (await this.row(cameraId))
    const channel: CameraChannel = new CameraChannel({
      // The camera's current source: an update of the camera restarts this stream on it.
      openReader: (handlers) => this.reader(this.channels.get(cameraId)?.row ?? row, handlers, options.fps, options.maxSide ?? null),
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

  /** Called after a camera is deleted with the consumers whose streams it ended. */
  onRemove(listener: (cameraId: string, consumers: string[]) => void): void {
    this.removeListeners.push(listener)
  }

  /** Called after a camera's source changed (update): readers of its own (recording, live view) start again on it. */
  onSourceChange(listener: (cameraId: string) => void): void {
    this.sourceListeners.push(listener)
  }

  /** The camera's source type; CameraNotFound. */
  async sourceType(cameraId: string): Promise<SourceType> {
    return (this.channels.get(cameraId)?.row ?? (await this.row(cameraId))).sourceType
  }

  /**
   * ffmpeg input arguments of the camera's current source, for a process that copies its video
   * without decoding it (recording, live view), and the password to redact from its messages;
   * credentials reach ffmpeg through the relay's ticket, which the copy process binds to its child.
   * HTTP (snapshot, MJPEG) and USB sources carry no stream to copy: StreamSourceUnsupported.
   */
  async copyInput(cameraId: string, copy: { wallclock?: boolean } = {}): Promise<CopyInput> {
    const row = this.channels.get(cameraId)?.row ?? (await this.row(cameraId))
    const options = { timeoutMs: this.config.cameraConnectTimeoutMs, rtspTimeoutOption: await this.timeoutOption(), wallclock: copy.wallclock }
    if (row.sourceType === 'rtsp') {
      const spec = await this.urlInput('rtsp', row)
      return { args: inputArgs(spec, options), password: row.password, ticket: spec.ticket, wallclock: copy.wallclock === true }
    }
    if (row.sourceType === 'file') return { args: inputArgs({ sourceType: 'file', input: path.join(this.config.dataPath, row.videoFile!) }, options), password: null }
    throw new ApiError('StreamSourceUnsupported', { details: { cameraId, sourceType: row.sourceType } })
  }

  /** Consumers reading a camera (stream task ids). */
  consumers(cameraId: string): string[] {
    return [...(this.streams.get(cameraId)?.keys() ?? [])]
  }

  /** CameraNotFound unless the camera exists. */
  async ensure(cameraId: string): Promise<void> {
    if (!this.channels.has(cameraId)) await this.row(cameraId)
  }

  /** The camera's source frame rate as last seen, null when unknown. */
  sourceFps(cameraId: string): number | null {
    return this.channels.get(cameraId)?.channel.fps ?? null
  }

  /** The ffmpeg process of a camera's reader (tests check that none outlives its camera). */
  readerPid(cameraId: string): number | null {
    return this.channels.get(cameraId)?.channel.pid ?? null
  }

  private async row(cameraId: string): Promise<CameraRow> {
    const [row] = await this.options.db.select().from(cameras).where(eq(cameras.cameraId, cameraId))
    if (!row) throw new ApiError('CameraNotFound', { details: { cameraId } })
    return row
  }

  /**
   * Checks the source fields of a source type. Credentials: the fields (an empty password
   * removes it), else those in the URL (split off it), else `stored` ones.
   */
  private sourceOf(sourceType: SourceType, input: { url?: string; uploadId?: string; device?: string; username?: string; password?: string },
    stored: { username: string | null; password: string | null; keepVideo: boolean } = { username: null, password: null, keepVideo: false }) {
    const keepVideo = stored.keepVideo
    const source = { url: null as string | null, username: input.username || stored.username, password: input.password === '' ? null : input.password || stored.password, device: null as string | null }
    const refuse = (field: string) => { throw invalid(field, `a ${sourceType} camera does not take ${field}`) }
    if (sourceType === 'rtsp' || sourceType === 'http') {
      if (!input.url) throw invalid('url', `a ${sourceType} camera needs url`)
      if (input.uploadId !== undefined) refuse('uploadId')
      const parsed = parseSourceUrl(sourceType, input.url)
      source.url = parsed.url
      source.username = input.username || parsed.username || stored.username
      source.password = input.password === '' ? null : input.password || parsed.password || stored.password
    } else if (sourceType === 'file') {
      if (input.uploadId === undefined && !keepVideo) throw invalid('uploadId', 'a file camera needs the uploadId of a video (purpose video)')
      if (input.url !== undefined) refuse('url')
    } else {
      if (!input.device || !USB_DEVICE.test(input.device)) throw invalid('device', 'must be a V4L2 device path /dev/videoN')
      if (input.url !== undefined) refuse('url')
      source.device = input.device
    }
    return source
  }

  /** Keeps a leased video under DATA_DIR/cameras (a hard link when possible, else a copy). */
  private async storeVideo(name: string, lease: UploadLease): Promise<{ videoFile: string }> {
    if (lease.size > this.config.cameraVideoMaxBytes)
      throw new ApiError('UPLOAD_TOO_LARGE', { details: { actualBytes: lease.size, limitBytes: this.config.cameraVideoMaxBytes, purpose: VIDEO_PURPOSE } })
    const videoFile = path.join('cameras', `${name}.video`)
    const target = path.join(this.config.dataPath, videoFile)
    await mkdir(path.dirname(target), { recursive: true })
    await link(lease.path, target).catch(() => copyFile(lease.path, target))
    return { videoFile }
  }

  /** Starts a channel and resolves at its first frame, or throws the source's error. */
  private async verify(channel: CameraChannel): Promise<void> {
    channel.start()
    await channel.ready(this.config.cameraConnectTimeoutMs + 2000)
  }

  /** Makes a channel the camera's (starting it unless it already runs) and announces its status. */
  private register(row: CameraRow, channel: CameraChannel, start: boolean): void {
    this.channels.set(row.cameraId, { row, channel })
    if (start) channel.start()
    else this.announce(row.cameraId, channel.status)
  }

  private async close(cameraId: string): Promise<void> {
    const open = this.channels.get(cameraId)
    this.channels.delete(cameraId)
    this.fullFrames.delete(cameraId)
    await open?.channel.stop()
  }

  private channel(row: CameraRow): CameraChannel {
    const channel: CameraChannel = new CameraChannel({
      // The camera's own reader: raised to the burst rate while a snapshot waits for its next frame (fullFrame).
      openReader: (handlers) => this.reader(row, handlers, this.config.cameraMonitorFps, null, this.config.snapshotFullResolution ? this.config.snapshotBurstFps : null),
      onFrame: () => {},
      reconnectMinMs: this.config.cameraReconnectMinMs,
      reconnectMaxMs: this.config.cameraReconnectMaxMs,
      // Only the camera's registered channel speaks for it (not one still being verified).
      onStatus: (status) => { if (this.channels.get(row.cameraId)?.channel === channel) this.announce(row.cameraId, status) },
    })
    return channel
  }

  /** Emits `camera.online` / `camera.offline` (spec 6) for a status change of an added camera. */
  private announce(cameraId: string, status: CameraStatus): void {
    const open = this.channels.get(cameraId)
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
    // The source's rate as last seen: a reader asking for all of it keeps every frame (ffmpeg.ts timedVideoFilter).
    const sourceFps = this.channels.get(row.cameraId)?.channel.fps ?? null
    const timing = { fps, maxSide, sourceFps, burstFps, connectTimeoutMs: this.config.cameraConnectTimeoutMs, stallTimeoutMs: this.config.cameraStallTimeoutMs }
    const option = await this.timeoutOption()
    const ffmpeg = (spec: InputSpec) => new FfmpegReader(this.binary, spec, { ...timing, rtspTimeoutOption: option }, row.password, handlers)
    switch (row.sourceType) {
      case 'rtsp':
        return ffmpeg(await this.urlInput('rtsp', row))
      case 'file':
        return ffmpeg({ sourceType: 'file', input: path.join(this.config.dataPath, row.videoFile!) })
      case 'usb':
        return ffmpeg({ sourceType: 'usb', input: row.device! })
      case 'http': {
        const authorization = row.username || row.password ? `Basic ${Buffer.from(`${row.username ?? ''}:${row.password ?? ''}`).toString('base64')}` : null
        if (await httpSourceKind(row.url!, authorization, timing.connectTimeoutMs) === 'mjpeg')
          return ffmpeg(await this.urlInput('mjpeg', row))
        return new SnapshotReader(row.url!, authorization, { ...timing, maxBytes: this.config.maxEncodedImageBytes }, handlers)
      }
    }
  }

  /** A URL source for ffmpeg: the URL itself, or, when it has credentials, a relay ticket (credential-relay.ts). */
  private async urlInput(sourceType: 'rtsp' | 'mjpeg', row: CameraRow): Promise<InputSpec> {
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

  private shownUrl(row: CameraRow): string | null {
    return row.url ? redactedUrl(row.url, row.username, row.password) : null
  }

  private view(row: CameraRow): CameraView {
    const channel = this.channels.get(row.cameraId)?.channel
    return {
      cameraId: row.cameraId,
      cameraName: row.cameraName,
      sourceType: row.sourceType,
      url: this.shownUrl(row),
      username: row.username,
      device: row.device,
      videoName: row.videoName,
      status: channel?.status ?? 'offline',
      lastError: channel?.error ? String(channel.error.item.details.reason ?? channel.error.message) : null,
      lastErrorKey: channel?.error?.item.messageKey ?? null,
      width: channel?.size?.width ?? null,
      height: channel?.size?.height ?? null,
      fps: channel?.fps ?? null,
      updateTime: String(row.updatedAt),
    }
  }
}
