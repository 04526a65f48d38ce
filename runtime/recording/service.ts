import { randomUUID } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import type { Config } from '../../shared/config.ts'
import type { Db } from '../db/client.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { DeviceEvent, EventsService } from '../../shared/events/types.ts'
import type { Logger } from '../../shared/handler.ts'
import { clipIdOf, clipUrlOf, DEFAULT_POST_ROLL_SECONDS, DEFAULT_PRE_ROLL_SECONDS, type CameraRecordView, type ClipPageInput, type RecordingService, type RecordParamView, type SetRecordParamInput } from '../../shared/recording/types.ts'
import type { ClipRequest } from '../../shared/recording/clip-recorder.ts'
import { KeyedMutex } from '../keyed-mutex.ts'
import type { CameraService } from '../cameras/service.ts'
import { ffmpegBinary } from '../cameras/ffmpeg.ts'
import type { Capacity } from '../uploads/capacity.ts'
import { ClipWriter, WRITE_MARGIN_MS } from './clip-writer.ts'
import { removeLeftovers } from './leftovers.ts'
import { PromisedClips } from './promised-clips.ts'
import { CameraRecorder, type RecorderSettings } from './recorder.ts'
import { Retention } from './retention.ts'
import { Segmenter } from './segmenter.ts'
import { clipView, RecordingStore, type CameraSettingRow } from './store.ts'

export interface RecordingServiceOptions {
  db: Db
  config: Config
  log: Logger
  events: EventsService
  cameras: CameraService
  /** Free space as uploads account it (spec 8). */
  space(): Promise<Capacity>
}

/** Where recordings live: `<DATA_DIR>/recordings/<cameraId>/` (clips), `.../ring/` (segments). */
export const recordingsDirOf = (dataPath: string) => path.join(dataPath, 'recordings')

const TRIGGERS = ['object.entered', 'object.left', 'alarm.raised'] as const
/** Space is enough again at twice the headroom (a suspension does not flap at the edge). */
const RESUME_FACTOR = 2

/**
 * `ctx.recording` (spec 4.10 System: recording): one CameraRecorder per camera that records,
 * event clips triggered by the events service (object.entered / object.left, alarm.raised;
 * an in-process subscription), retention by days, budget and the disk reserve (spec 8).
 * Clips are written one at a time across cameras, each after a retention pass that makes room
 * for it (clip-writer.ts); a clip that cannot get room is skipped. Analysis never waits on any of it.
 */
export class RecordingManager implements RecordingService {
  private readonly recorders = new Map<string, CameraRecorder>()
  private readonly store: RecordingStore
  private readonly retention: Retention
  private readonly writes = new KeyedMutex()
  private readonly promised = new PromisedClips()
  /** Joins, records and announces the clips (clip-writer.ts). */
  private readonly clips: ClipWriter
  private readonly binary: string
  private readonly dir: string
  private suspended = false
  private timer: NodeJS.Timeout | null = null
  private unsubscribe: (() => void) | null = null
  private checking = false

  constructor(private readonly options: RecordingServiceOptions) {
    const { db, config, log, events } = options
    this.binary = ffmpegBinary(config.ffmpegPath)
    this.dir = recordingsDirOf(config.dataPath)
    this.store = new RecordingStore(db, config, () => Date.now())
    this.retention = new Retention({
      store: this.store, space: options.space, headroomBytes: config.recordHeadroomBytes, dataPath: config.dataPath, events, log,
      ringBytes: () => this.ringBytes(),
    })
    this.clips = new ClipWriter({
      store: this.store, retention: this.retention, promised: this.promised, writes: this.writes, events, log, binary: this.binary, dataPath: config.dataPath,
    })
    options.cameras.onRemove((cameraId) => {
      this.store.deleteCamera(cameraId).then(() => this.sync(), (error: Error) => log.error({ err: error.message, cameraId }, 'recording settings of a deleted camera not removed'))
    })
    options.cameras.onSourceChange((cameraId) => { void this.recorders.get(cameraId)?.segmenter.restart() })
  }

  async start(): Promise<void> {
    await removeLeftovers(this.dir, this.options.config.dataPath, this.store, this.options.log)
    this.unsubscribe = this.options.events.subscribe(TRIGGERS, (event) => this.onEvent(event))
    await this.sync()
    this.timer = setInterval(() => void this.check(), this.options.config.recordCheckIntervalMs)
    this.timer.unref()
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.unsubscribe?.()
    const all = [...this.recorders.values()]
    this.recorders.clear()
    await Promise.all(all.map((r) => r.stop()))
  }

  async params(): Promise<RecordParamView> {
    const [retention, rows, totals, space] = await Promise.all([this.store.retention(), this.store.cameras(), this.store.totals(), this.options.space()])
    const ringBytes = this.ringBytes()
    return {
      retentionDays: retention.retentionDays,
      budgetBytes: String(retention.budgetBytes),
      headroomBytes: String(this.options.config.recordHeadroomBytes),
      usage: {
        clips: totals.clips, clipBytes: String(totals.bytes), ringBytes: String(ringBytes),
        availableBytes: String(space.availableBytes), reserveBytes: String(space.reserveBytes), availableForRecordingBytes: String(space.availableForNewUploadsBytes),
      },
      cameras: rows.map((row) => this.cameraView(row)),
    }
  }

  async setParams(input: SetRecordParamInput): Promise<RecordParamView> {
    const now = Date.now()
    const rows: CameraSettingRow[] = []
    for (const camera of input.cameras ?? []) {
      const sourceType = await this.options.cameras.sourceType(camera.cameraId)
      if (camera.mode !== 'off' && sourceType !== 'rtsp' && sourceType !== 'file')
        throw new ApiError('StreamSourceUnsupported', { details: { cameraId: camera.cameraId, sourceType } })
      rows.push({ cameraId: camera.cameraId, mode: camera.mode, preRollSeconds: camera.preRollSeconds ?? DEFAULT_PRE_ROLL_SECONDS, postRollSeconds: camera.postRollSeconds ?? DEFAULT_POST_ROLL_SECONDS, updatedAt: now })
    }
    if (input.retentionDays !== undefined || input.budgetBytes !== undefined) {
      const current = await this.store.retention()
      await this.store.setRetention({ retentionDays: input.retentionDays ?? current.retentionDays, budgetBytes: input.budgetBytes === undefined ? current.budgetBytes : Number(input.budgetBytes) })
    }
    await this.store.setCameras(rows)
    await this.sync()
    void this.check()
    return this.params()
  }

  clipPage(query: ClipPageInput) {
    return this.store.page(query)
  }

  async clip(clipId: string) {
    const found = await this.store.clip(clipId)
    if (!found) {
      // Still waiting in a recorder (an alarm's clip merged into its object's clip waits for the object to leave).
      for (const recorder of this.recorders.values()) {
        const until = recorder.waitingFor(clipId)
        if (until === undefined) continue
        const now = Date.now()
        const readyAt = Math.max(until ?? now, now) + (this.options.config.recordSegmentSeconds + 1) * 1000
        const retryAfterSeconds = Math.max(1, Math.ceil((readyAt - now) / 1000))
        throw new ApiError('ClipNotReady', { details: { clipId, retryAfterSeconds }, retryAfterSeconds })
      }
      const retryAfterSeconds = this.promised.retryAfterSeconds(clipId, Date.now())
      if (retryAfterSeconds !== null) throw new ApiError('ClipNotReady', { details: { clipId, retryAfterSeconds }, retryAfterSeconds })
      throw new ApiError('ClipNotFound', { details: { clipId } })
    }
    return { clip: clipView(found.row, found.links), file: path.join(this.options.config.dataPath, found.row.file) }
  }

  private ringBytes(): number {
    return [...this.recorders.values()].reduce((sum, r) => sum + r.ringBytes, 0)
  }

  private cameraView(row: CameraSettingRow): CameraRecordView {
    const recorder = this.recorders.get(row.cameraId)
    const process = recorder?.segmenter.process
    const state = row.mode === 'off' ? 'off' : this.suspended ? 'suspended' : process?.state === 'running' ? 'recording' : process?.state === 'offline' ? 'offline' : 'connecting'
    const error = process?.error
    return {
      cameraId: row.cameraId, mode: row.mode, preRollSeconds: row.preRollSeconds, postRollSeconds: row.postRollSeconds, state,
      lastError: error ? { messageKey: error.item.messageKey, reason: String(error.item.details.reason ?? '') } : null,
    }
  }

  /** Runs a recorder for every camera whose mode is not off (none while suspended), with its current settings. */
  private sync(): Promise<void> {
    return this.writes.run('sync', () => this.syncNow())
  }

  private async syncNow(): Promise<void> {
    const wanted = new Map((await this.store.cameras()).filter((row) => row.mode !== 'off' && !this.suspended).map((row) => [row.cameraId, row]))
    for (const [cameraId, recorder] of [...this.recorders]) {
      if (wanted.has(cameraId)) continue
      this.recorders.delete(cameraId)
      await recorder.stop()
      this.options.log.info({ cameraId }, 'recording stopped')
    }
    for (const [cameraId, row] of wanted) {
      const settings: RecorderSettings = { mode: row.mode as RecorderSettings['mode'], preRollSeconds: row.preRollSeconds, postRollSeconds: row.postRollSeconds }
      const current = this.recorders.get(cameraId)
      if (current) current.setSettings(settings)
      else await this.startRecorder(cameraId, settings)
    }
  }

  private async startRecorder(cameraId: string, settings: RecorderSettings): Promise<void> {
    const { config, log, cameras } = this.options
    const ring = path.join(this.dir, cameraId, 'ring')
    await mkdir(ring, { recursive: true })
    const recorderLog = log.child({ cameraId, component: 'recording' })
    let recorder: CameraRecorder | null = null
    const segmenter = new Segmenter({
      binary: this.binary, input: () => cameras.copyInput(cameraId), dir: ring, segmentSeconds: config.recordSegmentSeconds,
      connectTimeoutMs: config.cameraConnectTimeoutMs, stallTimeoutMs: config.cameraStallTimeoutMs,
      reconnectMinMs: config.cameraReconnectMinMs, reconnectMaxMs: config.cameraReconnectMaxMs, log: recorderLog,
      onSegment: (segment) => recorder?.onSegment(segment),
    })
    recorder = new CameraRecorder(cameraId, settings, segmenter, {
      segmentSeconds: config.recordSegmentSeconds, maxClipSeconds: config.recordMaxClipSeconds,
      continuousChunkSeconds: config.recordContinuousChunkSeconds, graceMs: this.graceMs(), now: Date.now,
    }, { write: (job) => this.clips.write(job), abandoned: (clipId) => this.promised.settle(clipId) }, recorderLog)
    this.recorders.set(cameraId, recorder)
    recorder.start()
    log.info({ cameraId, ...settings }, 'recording started')
  }

  private onEvent(event: DeviceEvent): void {
    const cameraId = typeof event.payload.cameraId === 'string' ? event.payload.cameraId : null
    const recorder = cameraId ? this.recorders.get(cameraId) : undefined
    if (!recorder) return
    const time = Date.parse(event.time)
    const taskId = typeof event.payload.taskId === 'string' ? event.payload.taskId : null
    const objectId = typeof event.payload.objectId === 'string' ? event.payload.objectId : null
    const clipEvent = { id: event.id, kind: event.kind, taskId, objectId }
    if (event.kind === 'object.entered') recorder.entered(clipEvent, time)
    else if (event.kind === 'object.left') recorder.left(taskId ?? '', objectId ?? '', time)
    // An alarm whose policy asked for a clip (recordEvent) already has one: it only learns its event id.
    else if (typeof event.payload.clipUrl === 'string') recorder.linkClip(clipIdOf(event.payload.clipUrl), event.id)
    else recorder.alarm(clipEvent, time)
  }

  /**
   * The clip action of alarm policies (shared/recording/clip-recorder.ts): the clip is kept like
   * an event clip, with the policy's pre- and post-roll; its URL is known at once.
   */
  records(cameraId: string): boolean {
    return this.recorders.has(cameraId)
  }

  async recordEvent(request: ClipRequest): Promise<{ clipUrl: string }> {
    const recorder = this.recorders.get(request.cameraId)
    if (!recorder) {
      throw new ApiError('AlarmActionUnavailable', {
        details: { action: 'clip', cameraId: request.cameraId, reason: 'the camera does not record: set its recording mode to events or continuous (SetRecordParam)' },
        msgText: `Camera ${request.cameraId} does not record, so no clip can be kept: set its recording mode to events or continuous.`,
      })
    }
    const clipId = randomUUID()
    // An alarm on one tracked object shares the clip of that object's visit (one clip per object).
    recorder.clipFor(clipId, { id: null, kind: 'alarm.raised', taskId: request.taskId ?? null, objectId: request.objectId ?? null }, request.at, request.preRollS, request.postRollS)
    // Written once a segment ends past the post-roll (a segment and a key frame later at most).
    const end = request.at + request.postRollS * 1000
    this.promised.promise(clipId, end + (this.options.config.recordSegmentSeconds + 1) * 1000, end + this.graceMs() + WRITE_MARGIN_MS)
    return { clipUrl: clipUrlOf(clipId) }
  }

  /** A clip whose end no segment reaches (the camera went offline) is written with what exists this long after its end. */
  private graceMs(): number {
    return this.options.config.cameraStallTimeoutMs + 20_000
  }

  /** The periodic pass: retention, suspension at the reserve and resumption, clips waiting on time. */
  private async check(): Promise<void> {
    if (this.checking) return
    this.checking = true
    try {
      const { writable, availableBytes } = await this.writes.run('clips', () => this.retention.enforce(Date.now()))
      const headroom = this.options.config.recordHeadroomBytes
      if (!writable && !this.suspended) await this.suspend(availableBytes)
      else if (this.suspended && availableBytes >= RESUME_FACTOR * headroom) await this.resume()
      for (const recorder of this.recorders.values()) recorder.tick()
      this.promised.prune(Date.now())
    } catch (error) {
      this.options.log.error({ err: (error as Error).message }, 'recording check failed')
    } finally {
      this.checking = false
    }
  }

  private async suspend(availableBytes: number): Promise<void> {
    const cameraIds = [...this.recorders.keys()]
    this.suspended = true
    await this.sync()
    this.options.log.warn({ cameraIds, availableBytes }, 'recording suspended: the disk is at its safety reserve and no footage is left to delete')
    for (const cameraId of cameraIds)
      await this.options.events.emit('recording.suspended', { cameraId, reason: 'reserve', availableBytes }).catch(() => undefined)
  }

  private async resume(): Promise<void> {
    this.suspended = false
    await this.sync()
    this.options.log.info({ cameraIds: [...this.recorders.keys()] }, 'recording resumed')
    for (const cameraId of this.recorders.keys()) await this.options.events.emit('recording.resumed', { cameraId }).catch(() => undefined)
  }
}
