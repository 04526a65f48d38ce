import { isApiError } from '../../shared/errors/index.ts'
import type { Logger } from '../../shared/handler.ts'
import type { InferenceService, TargetBox } from '../../shared/inference/types.ts'
import type { SchedulesService } from '../../shared/schedules/types.ts'
import type { TaskConfig } from '../../shared/tasks/types.ts'
import { MAX_TRACKED_DETECT_INTERVAL_MS, type StreamTaskResult, type StreamTaskState, type StreamTaskStatus } from '../../shared/streams/types.ts'
import type { streamTasks } from '../../shared/db/schema/index.ts'
import type { AlgorithmRegistry } from '../../shared/algorithms/types.ts'
import type { CameraService, CameraStream } from '../cameras/service.ts'
import type { Frame } from '../cameras/reader.ts'
import type { StreamTaskMetrics } from '../metrics/index.ts'
import { analysisMaxSide, inFramePixels, inSourcePixels, regionInputSide } from './analysis-size.ts'
import type { DetectScheduler } from './detect-scheduler.ts'
import { decide, type GateSettings } from './gating.ts'
import { MotionDetector } from './motion.ts'
import { cropsFor, detectCrops } from './regions.ts'
import { Rate, Samples } from './stats.ts'
import { IouTracker, type Detection } from './tracker.ts'
import type { StreamObserver, StreamObserverFactory } from './observers/index.ts'
import type { Snapshots } from './snapshots.ts'
import { EventWrites } from './event-writes.ts'
import { monotonicNow } from '../../shared/clock.ts'

export type StreamTaskRow = typeof streamTasks.$inferSelect

export interface StreamTaskDeps {
  log: Logger
  inference: InferenceService
  cameras: CameraService
  /** The pipeline manifests: the analysis size follows the task's detector. */
  algorithms: Pick<AlgorithmRegistry, 'get'>
  /** What reacts to the tracked objects (runtime/streams/observers). */
  observers: StreamObserverFactory[]
  /** Detector latency per task for the metrics endpoint (docs/metrics.md "Metrics"). */
  metrics?: Pick<StreamTaskMetrics, 'detectorLatency'>
  /** The task's schedule, asked on every frame (spec 4.10 Schedule). */
  schedules: Pick<SchedulesService, 'gate'>
  /** Turns at the detector, shared by every stream task of the device (detect-scheduler.ts). */
  scheduler: DetectScheduler
  /** STREAM_REGION_DETECTION (default true): false, the whole frame always. */
  regionDetection?: boolean
  /** Snapshots: the full-resolution search of a frame whose detection may confirm an object starts with it (snapshots.ts prepare). */
  snapshots?: Pick<Snapshots, 'prepare' | 'arm'>
}

/** Frames waiting for the motion gate; beyond this the oldest is dropped (real time over every frame). */
const QUEUE_CAPACITY = 2
/**
 * Tracking: overlap that continues a track, sightings that make an object, absence that ends
 * it, and how long an unseen track moves on along its velocity (the longest tracked interval).
 */
export const TRACKING = { minIou: 0.2, maxCentreShift: 0.6, maxSidesPerSecond: 0.8, maxLateShift: 1.5, confirmHits: 2, leaveAfterMs: 2500, maxPredictMs: MAX_TRACKED_DETECT_INTERVAL_MS }
/** How long a tentative object keeps the camera's reader at its burst rate: past the next detection (at least every minDetectIntervalMs, 1000 by default). */
const ARM_MS = 1500
/** After a failed detection (sidecar restarting), wait this long before the next frame. */
const FAILURE_PAUSE_MS = 1000

export const handleOf = (taskId: string) => `stream:${taskId}`

/**
 * One stream task: a camera stream at the task's rate → a bounded queue → motion gate →
 * detector in the sidecar → tracker → per-object events. Measures what QueryTaskStatus shows.
 *
 * The gate sees every frame, whether or not a detection is running (docs/cameras-and-stream-tasks.md
 * "Detector scheduling"): a still frame is skipped at once, a frame for the detector waits in a
 * slot of one (a newer one replaces it: the older is dropped and counted) until the task's
 * turn at the shared detector (DetectScheduler), so the detector always gets the task's newest
 * frame and no backlog builds up under overload.
 */
export class StreamTask {
  private state: StreamTaskState = 'waiting'
  private stateReason: string | null = 'connecting to the camera'
  private lastError: StreamTaskStatus['lastError'] = null
  private queue: Frame[] = []
  private wake: (() => void) | null = null
  private stream: CameraStream | null = null
  private running = false
  private loop: Promise<void> = Promise.resolve()
  /** The newest frame the gate sent to the detector, waiting for the task's turn. */
  /** The frame for the detector, with the motion regions to detect it on (null: whole). */
  private pending: { frame: Frame; crops: TargetBox[] | null } | null = null
  /** The task's detections (one at a time), while it has a frame for the detector. */
  private detecting: Promise<void> | null = null
  /** Ends a wait for the detector when the task stops. */
  private stopping = new AbortController()
  private readonly motion = new MotionDetector()
  private readonly tracker = new IouTracker(TRACKING)
  /** When the frame last sent to the detector was decoded. */
  private lastDetectAt = 0
  /** When the frame last detected whole was decoded. */
  private lastWholeAt = -Infinity
  /** The smallest crop side (the detector's input side), null: the whole frame always (runtime/streams/regions.ts). */
  private readonly regionSide: number | null
  private readonly gate: GateSettings
  private readonly inputRate = new Rate()
  private readonly processedRate = new Rate()
  private readonly detectorLatency = new Samples()
  private readonly criticalLatency = new Samples()
  /** Events written in order off the frame loop (a snapshot may wait for its full-resolution frame). */
  private readonly writes: EventWrites
  private framesIn = 0
  private framesDropped = 0
  private framesProcessed = 0
  private framesFailed = 0
  private motionSkipped = 0
  private regionFrames = 0
  private trackedSkipped = 0
  private objectsEntered = 0
  private scheduleSkipped = 0
  private scheduleOpen = true
  private observers: StreamObserver[] = []
  /** The detector's latest result on this task's frames (live view overlay). */
  latest: StreamTaskResult | null = null

  constructor(readonly row: StreamTaskRow, private readonly deps: StreamTaskDeps) {
    this.writes = new EventWrites(deps.log.child({ taskId: row.taskId }))
    const { minDetectIntervalMs, trackedDetectIntervalMs, taskConfig } = row
    this.motion.mask(((taskConfig as TaskConfig).motionMasks ?? []).map((m) => m.polygon))
    this.gate = { minDetectIntervalMs, trackedDetectIntervalMs, followWalkers: Array.isArray(taskConfig.counters) && taskConfig.counters.length > 0 }
    this.regionSide = row.motionGating && row.regionDetection && deps.regionDetection !== false
      ? regionInputSide(deps.algorithms.get(row.algorithmCode)?.manifest, taskConfig as { regions?: unknown[]; detectorInputSize?: number })
      : null
  }

  get handle(): string {
    return handleOf(this.row.taskId)
  }

  /** A disabled task: reads nothing until started. */
  disable(): void {
    this.setState('disabled', null)
  }

  async start(): Promise<void> {
    this.setState('waiting', 'connecting to the camera')
    this.observers = this.deps.observers.map((make) => make(this.row))
    this.running = true
    this.stopping = new AbortController()
    this.loop = this.run()
    try {
      this.stream = await this.deps.cameras.openStream(this.row.cameraId, this.row.taskId, {
        fps: this.row.targetFps,
        maxSide: analysisMaxSide(this.deps.algorithms.get(this.row.algorithmCode)?.manifest, this.row.taskConfig),
        onFrame: (frame) => this.enqueue(frame),
        onStatus: (status, error) => {
          if (status === 'online') this.setState('running', null)
          else if (status === 'offline') this.setState('waiting', `camera offline: ${error?.item.messageKey ?? 'unknown'} (${String(error?.item.details.reason ?? '')})`)
        },
      })
    } catch (error) {
      // A camera deleted while the task was stored: the task waits until it is cancelled.
      this.setState('waiting', isApiError(error) && error.id === 'CameraNotFound' ? 'cameraDeleted' : (error as Error).message)
    }
  }

  private setState(state: StreamTaskState, reason: string | null): void {
    this.state = state
    this.stateReason = reason
  }

  /** The pipeline did not load (device start): the task stays stopped, its state says why. */
  pipelineFailed(messageKey: string): void {
    this.setState('waiting', `pipelineFailed: ${messageKey}`)
  }

  /** The camera ended this task's stream (camera deleted with force). */
  cameraDeleted(): void {
    this.stream = null
    this.setState('waiting', 'cameraDeleted')
  }

  private enqueue(frame: Frame): void {
    this.framesIn++
    this.inputRate.tick(monotonicNow())
    if (this.queue.length >= QUEUE_CAPACITY) {
      this.queue.shift()
      this.framesDropped++
    }
    this.queue.push(frame)
    this.wake?.()
  }

  private async next(): Promise<Frame | null> {
    while (this.running && this.queue.length === 0) await new Promise<void>((resolve) => { this.wake = resolve })
    this.wake = null
    return this.running ? this.queue.shift()! : null
  }

  private async run(): Promise<void> {
    for (let frame = await this.next(); frame; frame = await this.next()) {
      try {
        await this.gateFrame(frame)
      } catch (error) {
        this.failed(error)
        await new Promise((resolve) => setTimeout(resolve, FAILURE_PAUSE_MS))
      }
    }
  }

  private failed(error: unknown): void {
    this.framesFailed++
    const item = isApiError(error) ? error.item : { messageKey: 'api.error.Internal', msgText: (error as Error).message }
    this.lastError = { messageKey: item.messageKey, msgText: item.msgText, at: String(Date.now()) }
    this.deps.log.warn({ taskId: this.row.taskId, messageKey: item.messageKey, err: item.msgText }, 'stream task frame failed')
  }

  /** The schedule and the motion gate on every frame; a frame for the detector goes to the task's slot. */
  private async gateFrame(frame: Frame): Promise<void> {
    if (!(await this.scheduled())) {
      this.framesProcessed++
      return
    }
    // Motion gating (runtime/streams/gating.ts): the tracked boxes where the tracker predicts them on this frame.
    let crops: TargetBox[] | null = null
    if (this.row.motionGating) {
      const motion = this.motion.detect(frame.rgb, frame.width, frame.height, frame.time)
      const tracked = this.tracker.predict(frame.time).map(({ track, box }) => ({ box: inFramePixels(box, frame), confirmed: track.confirmed }))
      const decision = decide(motion, tracked, frame.time - this.lastDetectAt, this.gate)
      if (!decision.detect) {
        this.motionSkipped++
        if (decision.reason === 'tracked') this.trackedSkipped++
        this.processedRate.tick(monotonicNow())
        this.framesProcessed++
        return
      }
      // Detection on motion regions (docs/cameras-and-stream-tasks.md "Detection on motion regions").
      crops = cropsFor({
        side: this.regionSide, reason: decision.reason, sinceWholeMs: frame.time - this.lastWholeAt, minDetectIntervalMs: this.row.minDetectIntervalMs,
        motion: motion.regions.map((region) => region.box), tracked: tracked.map((t) => t.box), frame: { width: frame.width, height: frame.height },
      })
    }
    // The intervals count from the frame sent, not from when its turn comes.
    this.lastDetectAt = frame.time
    if (this.pending) this.framesDropped++
    this.pending = { frame, crops }
    this.detecting ??= this.detectPending()
  }

  /** While the task has a frame for the detector: waits for its turn, then detects the newest. */
  private async detectPending(): Promise<void> {
    try {
      while (this.running && this.pending) {
        let end: () => void
        try {
          end = await this.deps.scheduler.turn(this.row.taskId, this.stopping.signal)
        } catch {
          return
        }
        const next = this.pending
        this.pending = null
        let failed = false
        let ended = false
        const endTurn = () => {
          if (ended) return
          ended = true
          end()
        }
        try {
          if (next && this.running) {
            await this.process(next.frame, next.crops, endTurn)
            this.framesProcessed++
          }
        } catch (error) {
          this.failed(error)
          failed = true
        } finally {
          endTurn()
        }
        if (failed) await new Promise((resolve) => setTimeout(resolve, FAILURE_PAUSE_MS))
      }
    } finally {
      this.detecting = null
    }
  }

  /**
   * spec 4.10 Schedule: outside its windows the task reads frames but analyses none; the objects
   * it tracked leave when the schedule turns off, and its observers start afresh when it turns on.
   */
  private async scheduled(): Promise<boolean> {
    const gate = this.row.scheduleId ? this.deps.schedules.gate(this.row.scheduleId) : null
    const open = gate?.active ?? true
    if (open !== this.scheduleOpen) {
      this.scheduleOpen = open
      if (open) this.observers = this.deps.observers.map((make) => make(this.row))
      else {
        const left = this.tracker.clear()
        await this.writes.drained()
        for (const observer of this.observers) await observer.onStop?.(left)
      }
    }
    if (open && this.state === 'idle') this.setState('running', null)
    if (!open) {
      this.scheduleSkipped++
      if (this.state === 'running' || this.state === 'idle') this.setState('idle', `outsideSchedule: "${gate!.scheduleName}" until ${gate!.nextChangeLocal ?? 'never'}`)
    }
    return open
  }

  /**
   * Detection → tracker → observers, on a frame the gate sent to the detector. The detector's
   * turn ends with the detection (`endTurn`): what the observers wait for (a snapshot's
   * full-resolution frame, the event store) must not hold another task's detection.
   */
  private async process(frame: Frame, crops: TargetBox[] | null, endTurn: () => void): Promise<void> {
    const started = monotonicNow()
    // A tentative object confirmed by this detection is an object.entered with a snapshot, cut from the camera's first
    // frame at its size at or after this one: its search starts now, beside the detection (docs/cameras-and-stream-tasks.md "Snapshots").
    if (this.tracker.hasTentative) this.deps.snapshots?.prepare(this.row.cameraId, frame)
    const detect = async (image: { kind: 'rgb'; width: number; height: number; data: Uint8Array }) =>
      (await this.deps.inference.detect({ handle: this.handle, image, overlay: false })).result
    let found = crops ? await detectCrops(detect, frame, crops) : null
    if (found) this.regionFrames++
    else {
      found = await detect({ kind: 'rgb', width: frame.width, height: frame.height, data: frame.rgb })
      this.lastWholeAt = frame.time
    }
    // The detector's cost of the frame: every crop's detection, and the whole frame's after a cut one.
    const latency = monotonicNow() - started
    endTurn()
    this.detectorLatency.add(latency)
    this.deps.metrics?.detectorLatency(this.row.taskId, latency)
    // Boxes in the camera's own pixels, whatever size the frame was analysed at.
    const result = inSourcePixels(found, frame)
    const detections: Detection[] = result.areaList.flatMap((area) => area.targetList.map((target) => ({
      box: target.box, label: target.confidence[0]?.label ?? 'object', confidence: target.confidence[0]?.confidence ?? 0, areaId: area.areaId, target,
    })))
    // The live view draws these over the camera's picture: its own size and pixels.
    this.latest = {
      taskId: this.row.taskId, cameraId: this.row.cameraId, time: frame.time, pts: frame.pts ?? null, width: frame.source.width, height: frame.source.height,
      objects: detections.map(({ box, label, confidence }) => ({ box, label, confidence })),
    }
    const { entered, left } = this.tracker.update(detections, frame.time)
    // A tentative object is confirmed at its next sighting, an object.entered with a snapshot: the camera's reader keeps
    // its frames at the burst rate until then (docs/cameras-and-stream-tasks.md "Snapshots").
    if (this.tracker.hasTentative) this.deps.snapshots?.arm(this.row.cameraId, frame, ARM_MS)
    this.objectsEntered += entered.length
    const analysis = { frame, result, tracks: this.tracker.objects, entered, left, later: (write: () => Promise<unknown>) => this.writes.later(frame.time, write) }
    for (const observer of this.observers) await observer.onAnalysis?.(analysis)
    this.processedRate.tick(monotonicNow())
    this.criticalLatency.add(Date.now() - frame.time)
  }

  /** Stops reading and analysing; resolves when the reader has exited and no detection runs. */
  async stop(): Promise<void> {
    this.running = false
    this.wake?.()
    this.stopping.abort(new Error('stream task stopped'))
    await this.stream?.stop()
    this.stream = null
    await this.loop
    await this.detecting
    this.queue = []
    this.pending = null
    const left = this.tracker.clear()
    // The events still waiting for their snapshots first: an object's object.left after its object.entered.
    await this.writes.drained()
    for (const observer of this.observers) await observer.onStop?.(left)
    await this.writes.drained()
  }

  status(): StreamTaskStatus {
    // The rates' windows run on the monotonic clock (shared/clock.ts).
    const now = monotonicNow()
    return {
      taskId: this.row.taskId,
      taskName: this.row.taskName ?? null,
      kind: 'stream',
      algorithmCode: this.row.algorithmCode,
      cameraId: this.row.cameraId,
      targetFps: this.row.targetFps,
      state: this.state,
      stateReason: this.stateReason,
      motionGating: this.row.motionGating,
      minDetectIntervalMs: this.row.minDetectIntervalMs,
      trackedDetectIntervalMs: this.row.trackedDetectIntervalMs,
      regionDetection: this.row.regionDetection,
      enabled: this.row.enabled,
      taskConfig: this.row.taskConfig,
      scheduleId: this.row.scheduleId,
      inputFps: this.inputRate.perSecond(now),
      processedFps: this.processedRate.perSecond(now),
      framesIn: this.framesIn,
      framesDropped: this.framesDropped,
      framesProcessed: this.framesProcessed,
      framesFailed: this.framesFailed,
      motionSkipped: this.motionSkipped,
      trackedSkipped: this.trackedSkipped,
      regionFrames: this.regionFrames,
      scheduleSkipped: this.scheduleSkipped,
      discardRate: this.framesIn > 0 ? Math.round((this.framesDropped / this.framesIn) * 10_000) / 10_000 : 0,
      detectorLatencyP50Ms: this.detectorLatency.percentile(50),
      detectorLatencyP99Ms: this.detectorLatency.percentile(99),
      criticalPathLatencyP99Ms: this.criticalLatency.percentile(99),
      eventWriteP99Ms: this.writes.delay.percentile(99),
      trackedObjects: this.tracker.active,
      objectsEntered: this.objectsEntered,
      lastError: this.lastError,
      createdAt: String(this.row.createdAt),
    }
  }
}
