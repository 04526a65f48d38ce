import { isApiError } from '../../shared/errors/index.ts'
import type { Logger } from '../../shared/handler.ts'
import type { InferenceService } from '../../shared/inference/types.ts'
import type { SchedulesService } from '../../shared/schedules/types.ts'
import { MAX_TRACKED_DETECT_INTERVAL_MS, type StreamTaskResult, type StreamTaskState, type StreamTaskStatus } from '../../shared/streams/types.ts'
import type { streamTasks } from '../../shared/db/schema/index.ts'
import type { AlgorithmRegistry } from '../../shared/algorithms/types.ts'
import type { CameraService, CameraStream } from '../cameras/service.ts'
import type { Frame } from '../cameras/reader.ts'
import type { StreamTaskMetrics } from '../metrics/index.ts'
import { analysisMaxSide, inFramePixels, inSourcePixels } from './analysis-size.ts'
import { decide, type GateSettings } from './gating.ts'
import { MotionDetector } from './motion.ts'
import { Rate, Samples } from './stats.ts'
import { IouTracker, type Detection } from './tracker.ts'
import type { StreamObserver, StreamObserverFactory } from './observers/index.ts'

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
}

/** Frames waiting for the detector; beyond this the oldest is dropped (real time over every frame). */
const QUEUE_CAPACITY = 2
/**
 * Tracking: overlap that continues a track, sightings that make an object, absence that ends
 * it, and how long an unseen track moves on along its velocity (the longest tracked interval).
 */
export const TRACKING = { minIou: 0.2, maxCentreShift: 0.6, confirmHits: 2, leaveAfterMs: 2500, maxPredictMs: MAX_TRACKED_DETECT_INTERVAL_MS }
/** After a failed detection (sidecar restarting), wait this long before the next frame. */
const FAILURE_PAUSE_MS = 1000

export const handleOf = (taskId: string) => `stream:${taskId}`

/**
 * One stream task: a camera stream at the task's rate → a bounded queue → motion gate →
 * detector in the sidecar → tracker → per-object events. Measures what QueryTaskStatus shows.
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
  private readonly motion = new MotionDetector()
  private readonly tracker = new IouTracker(TRACKING)
  /** When the frame last sent to the detector was decoded. */
  private lastDetectAt = 0
  private readonly gate: GateSettings
  private readonly inputRate = new Rate()
  private readonly processedRate = new Rate()
  private readonly detectorLatency = new Samples()
  private readonly criticalLatency = new Samples()
  private framesIn = 0
  private framesDropped = 0
  private framesProcessed = 0
  private framesFailed = 0
  private motionSkipped = 0
  private trackedSkipped = 0
  private objectsEntered = 0
  private scheduleSkipped = 0
  private scheduleOpen = true
  private observers: StreamObserver[] = []
  /** The detector's latest result on this task's frames (live view overlay). */
  latest: StreamTaskResult | null = null

  constructor(readonly row: StreamTaskRow, private readonly deps: StreamTaskDeps) {
    const { minDetectIntervalMs, trackedDetectIntervalMs, taskConfig } = row
    this.gate = { minDetectIntervalMs, trackedDetectIntervalMs, followWalkers: Array.isArray(taskConfig.counters) && taskConfig.counters.length > 0 }
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
    this.inputRate.tick(frame.time)
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
        await this.process(frame)
        this.framesProcessed++
      } catch (error) {
        this.framesFailed++
        const item = isApiError(error) ? error.item : { messageKey: 'api.error.Internal', msgText: (error as Error).message }
        this.lastError = { messageKey: item.messageKey, msgText: item.msgText, at: String(Date.now()) }
        this.deps.log.warn({ taskId: this.row.taskId, messageKey: item.messageKey, err: item.msgText }, 'stream task frame failed')
        await new Promise((resolve) => setTimeout(resolve, FAILURE_PAUSE_MS))
      }
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

  private async process(frame: Frame): Promise<void> {
    if (!(await this.scheduled())) return
    // Motion gating (runtime/streams/gating.ts): the tracked boxes where the tracker predicts them on this frame.
    if (this.row.motionGating) {
      const motion = this.motion.detect(frame.rgb, frame.width, frame.height, frame.time)
      const tracked = this.tracker.predict(frame.time).map(({ track, box }) => ({ box: inFramePixels(box, frame), confirmed: track.confirmed }))
      const decision = decide(motion, tracked, frame.time - this.lastDetectAt, this.gate)
      if (!decision.detect) {
        this.motionSkipped++
        if (decision.reason === 'tracked') this.trackedSkipped++
        this.processedRate.tick(Date.now())
        return
      }
    }
    this.lastDetectAt = frame.time
    const started = Date.now()
    const outcome = await this.deps.inference.detect({ handle: this.handle, image: { kind: 'rgb', width: frame.width, height: frame.height, data: frame.rgb }, overlay: false })
    const latency = Date.now() - started
    this.detectorLatency.add(latency)
    this.deps.metrics?.detectorLatency(this.row.taskId, latency)
    // Boxes in the camera's own pixels, whatever size the frame was analysed at.
    const result = inSourcePixels(outcome.result, frame)
    const detections: Detection[] = result.areaList.flatMap((area) => area.targetList.map((target) => ({
      box: target.box, label: target.confidence[0]?.label ?? 'object', confidence: target.confidence[0]?.confidence ?? 0, areaId: area.areaId, target,
    })))
    // The live view draws these over the camera's picture: its own size and pixels.
    this.latest = {
      taskId: this.row.taskId, cameraId: this.row.cameraId, time: frame.time, width: frame.source.width, height: frame.source.height,
      objects: detections.map(({ box, label, confidence }) => ({ box, label, confidence })),
    }
    const { entered, left } = this.tracker.update(detections, frame.time)
    this.objectsEntered += entered.length
    const analysis = { frame, result, tracks: this.tracker.objects, entered, left }
    for (const observer of this.observers) await observer.onAnalysis?.(analysis)
    this.processedRate.tick(Date.now())
    this.criticalLatency.add(Date.now() - frame.time)
  }

  /** Stops reading and analysing; resolves when the reader has exited and no detection runs. */
  async stop(): Promise<void> {
    this.running = false
    this.wake?.()
    await this.stream?.stop()
    this.stream = null
    await this.loop
    this.queue = []
    const left = this.tracker.clear()
    for (const observer of this.observers) await observer.onStop?.(left)
  }

  status(): StreamTaskStatus {
    const now = Date.now()
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
      scheduleSkipped: this.scheduleSkipped,
      discardRate: this.framesIn > 0 ? Math.round((this.framesDropped / this.framesIn) * 10_000) / 10_000 : 0,
      detectorLatencyP50Ms: this.detectorLatency.percentile(50),
      detectorLatencyP99Ms: this.detectorLatency.percentile(99),
      criticalPathLatencyP99Ms: this.criticalLatency.percentile(99),
      trackedObjects: this.tracker.active,
      objectsEntered: this.objectsEntered,
      lastError: this.lastError,
      createdAt: String(this.row.createdAt),
    }
  }
}
