import { randomUUID } from 'node:crypto'
import { copyFile, link, mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { asc, count, eq } from 'drizzle-orm'
import type { Config } from '../../shared/config.ts'
import type { Db } from '../db/client.ts'
import { containsText } from '../db/like.ts'
import { cameras } from '../../shared/db/schema/index.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { EventsService } from '../../shared/events/types.ts'
import type { Clock, Identity, Logger } from '../../shared/handler.ts'
import type { UploadLease, UploadService } from '../../shared/uploads/index.ts'
import type { CamerasService, CameraStatus, CameraView, Capture, SourceType, UsbDevice } from '../../shared/cameras/types.ts'
import type { AddCameraInput, UpdateCameraInput } from '../../shared/cameras/inputs.ts'
import { redactedUrl } from './url.ts'
import { toFullPicture } from '../tasks/full-picture.ts'
import { frameJpeg } from '../system/image-quality.ts'
import type { ImageQualityService } from '../../shared/system/types.ts'
import type { CameraChannel } from './channel.ts'
import { CameraChannels, type CameraStream } from './channels.ts'
import type { CopyInput } from './copy-process.ts'
import type { Frame } from './reader.ts'
import type { FullFrame } from './full-frame.ts'
import { cameraSources } from './sources/index.ts'
import type { CameraRow } from './sources/types.ts'
import { listUsbDevices } from './sources/usb.ts'

export type { CameraStream } from './channels.ts'

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

/**
 * `ctx.cameras` (spec 4.10 Camera): the camera rows; their connection state machines are the
 * channels' (channels.ts), each reading through the reader its source plugin opens
 * (sources/, picked by `sourceType`).
 */
export class CameraService implements CamerasService {
  /** Supervision: each camera's channel and consumer streams (camera id → consumer id → channel). */
  private readonly supervision: CameraChannels
  private readonly channels: Map<string, { row: CameraRow; channel: CameraChannel }>
  private readonly streams: Map<string, Map<string, CameraChannel>>
  private readonly removeListeners: ((cameraId: string, consumers: string[]) => void)[] = []
  private readonly sourceListeners: ((cameraId: string) => void)[] = []

  constructor(private readonly options: CameraServiceOptions) {
    this.supervision = new CameraChannels(options)
    this.channels = this.supervision.open
    this.streams = this.supervision.streams
  }

  private get config() { return this.options.config }

  /** Starts a channel for every stored camera (device start). */
  async start(): Promise<void> {
    for (const row of await this.options.db.select().from(cameras)) this.supervision.register(row, this.supervision.channel(row), true)
  }

  /** Stops every reader; resolves when their processes have exited (device stop). */
  stop(): Promise<void> {
    return this.supervision.stop()
  }

  async add(input: AddCameraInput, identity: Identity): Promise<string> {
    const cameraId = randomUUID()
    const now = this.options.clock.now()
    let lease: UploadLease | null = null
    const source = cameraSources[input.sourceType].fields(input, { username: null, password: null, keepVideo: false })
    let videoFile: string | null = null
    let videoName: string | null = null
    if (cameraSources[input.sourceType].storesVideo) {
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
    const channel = this.supervision.channel(row)
    try {
      if (input.verify !== false) await this.supervision.verify(channel)
      await this.options.db.insert(cameras).values(row)
    } catch (error) {
      await channel.stop()
      await lease?.abandon()
      if (videoFile) await rm(path.join(this.config.dataPath, videoFile), { force: true })
      throw error
    }
    await lease?.commit()
    this.supervision.register(row, channel, input.verify === false)
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
    const source = cameraSources[current.sourceType].fields({
      url: input.url ?? current.url ?? undefined,
      device: input.device ?? current.device ?? undefined,
      uploadId: input.uploadId,
      username: input.username,
      password: input.password,
    }, { username: current.username, password: current.password, keepVideo: !!cameraSources[current.sourceType].storesVideo && input.uploadId === undefined })
    let lease: UploadLease | null = null
    let video = { videoFile: current.videoFile, videoName: current.videoName }
    if (cameraSources[current.sourceType].storesVideo && input.uploadId !== undefined) {
      lease = await this.options.uploads.lease(input.uploadId, identity, VIDEO_PURPOSE)
      try {
        video = { videoFile: (await this.storeVideo(`${current.cameraId}-${now}`, lease)).videoFile, videoName: lease.originalFilename }
      } catch (error) {
        await lease.abandon()
        throw error
      }
    }
    const row: CameraRow = { ...current, ...source, ...video, cameraName: input.cameraName ?? current.cameraName, updatedAt: now }
    const channel = this.supervision.channel(row)
    try {
      if (input.verify !== false) await this.supervision.verify(channel)
      await this.options.db.update(cameras).set(row).where(eq(cameras.cameraId, row.cameraId))
    } catch (error) {
      await channel.stop()
      await lease?.abandon()
      if (video.videoFile !== current.videoFile) await rm(path.join(this.config.dataPath, video.videoFile!), { force: true })
      throw error
    }
    await lease?.commit()
    await this.supervision.close(row.cameraId)
    this.supervision.register(row, channel, input.verify === false)
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
    await this.supervision.close(cameraId)
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

  /** The camera's first frame at its own size at or after `analysed`, for a snapshot (CameraChannels.fullFrame). */
  fullFrame(cameraId: string, analysed: Frame): Promise<FullFrame> {
    return this.supervision.fullFrame(cameraId, analysed)
  }

  /** The camera's own reader at its burst rate for the next `ms` (CameraChannels.armFullFrames). */
  armFullFrames(cameraId: string, ms: number): void {
    this.supervision.armFullFrames(cameraId, ms)
  }

  /** V4L2 capture devices (`/dev/videoN`) with their driver's name; empty without any. */
  usbList(): Promise<UsbDevice[]> {
    return listUsbDevices()
  }

  /**
   * Frames of a camera at `fps` for one consumer (a stream task): a reader of its own at that
   * rate, reconnecting like the camera's. While any consumer is open, `remove` refuses the
   * camera unless forced (then the consumers' streams end).
   */
  async openStream(cameraId: string, consumer: string, options: { fps: number; maxSide?: number | null; onFrame(frame: Frame): void; onStatus(status: CameraStatus, error: ApiError | null): void }): Promise<CameraStream> {
    return this.supervision.openStream(this.channels.get(cameraId)?.row ?? (await this.row(cameraId)), consumer, options)
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
    return this.supervision.copyInput(this.channels.get(cameraId)?.row ?? (await this.row(cameraId)), copy)
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
