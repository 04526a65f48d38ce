import { isApiError } from '../../shared/errors/index.ts'
import type { Logger } from '../../shared/handler.ts'
import type { InferenceService, TargetBox } from '../../shared/inference/types.ts'
import type { SchedulesService } from '../../shared/schedules/types.ts'
import type { StreamTaskResult, StreamTaskState, StreamTaskStatus } from '../../shared/streams/types.ts'
import type { streamTasks } from '../../shared/db/schema/index.ts'
import type { AlgorithmRegistry } from '../../shared/algorithms/types.ts'
import type { CameraService, CameraStream } from '../cameras/service.ts'
import type { Frame } from '../cameras/reader.ts'
import type { StreamTaskMetrics } from '../metrics/index.ts'
import { analysisMaxSide } from './analysis-size.ts'
import type { DetectScheduler } from './detect-scheduler.ts'
import { Rate } from './stats.ts'
import { FrameQueue } from './frame-queue.ts'
import { TaskAnalysis } from './task-analysis.ts'
import { TaskGate } from './task-gate.ts'
import type { StreamObserverFactory } from './observers/index.ts'
import type { Snapshots } from './snapshots.ts'
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

/** After a failed detection (sidecar restarting), wait this long before the next frame. */
const FAILURE_PAUSE_MS = 1000

export const handleOf = (taskId: string) => `stream:${taskId}`

/**
 * One stream task: a camera stream at the task's rate → a bounded queue → schedule and motion
 * gate (task-gate.ts) → the task's turn at the detector in the sidecar → tracker → per-object
 * events (task-analysis.ts). Measures what QueryTaskStatus shows.
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
  /** The camera's frames waiting for the gate (frame-queue.ts). */
  private readonly frames = new FrameQueue()
  private stream: CameraStream | null = null
  private running = false
  private loop: Promise<void> = Promise.resolve()
  /** The newest frame the gate sent to the detector, waiting for the task's turn, with the motion regions to detect it on (null: whole). */
  private pending: { frame: Frame; crops: TargetBox[] | null } | null = null
  /** The task's detections (one at a time), while it has a frame for the detector. */
  private detecting: Promise<void> | null = null
  /** Ends a wait for the detector when the task stops. */
  private stopping = new AbortController()
  /** The motion gate: which frames go to the detector, on which regions (task-gate.ts). */
  private readonly gate: TaskGate
  /** Detection → tracker → observers and their event writes (task-analysis.ts). */
  private readonly analysis: TaskAnalysis
  private readonly processedRate = new Rate()
  /** Frames the gate sent to the detector that a newer one replaced before the task's turn. */
  private slotDropped = 0
  private framesProcessed = 0
  private framesFailed = 0
  private scheduleSkipped = 0
  private scheduleOpen = true

  constructor(readonly row: StreamTaskRow, private readonly deps: StreamTaskDeps) {
    this.analysis = new TaskAnalysis(row, handleOf(row.taskId), deps)
    this.gate = new TaskGate(row, deps)
  }

  get handle(): string {
    return handleOf(this.row.taskId)
  }

  /** The detector's latest result on this task's frames (live view overlay). */
  get latest(): StreamTaskResult | null {
    return this.analysis.latest
  }

  /** A disabled task: reads nothing until started. */
  disable(): void {
    this.setState('disabled', null)
  }

  async start(): Promise<void> {
    this.setState('waiting', 'connecting to the camera')
    this.analysis.begin()
    this.running = true
    this.frames.open()
    this.stopping = new AbortController()
    this.loop = this.run()
    try {
      this.stream = await this.deps.cameras.openStream(this.row.cameraId, this.row.taskId, {
        fps: this.row.targetFps,
        maxSide: analysisMaxSide(this.deps.algorithms.get(this.row.algorithmCode)?.manifest, this.row.taskConfig),
        onFrame: (frame) => this.frames.push(frame),
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

  private async run(): Promise<void> {
    for (let frame = await this.frames.next(); frame; frame = await this.frames.next()) {
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
    const sent = this.gate.check(frame, this.analysis.tracker, this.analysis.lastWholeAt)
    if (!sent) {
      this.processedRate.tick(monotonicNow())
      this.framesProcessed++
      return
    }
    if (this.pending) this.slotDropped++
    this.pending = { frame, crops: sent.crops }
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
            await this.analysis.process(next.frame, next.crops, endTurn)
            this.processedRate.tick(monotonicNow())
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
      if (open) this.analysis.begin()
      else await this.analysis.end()
    }
    if (open && this.state === 'idle') this.setState('running', null)
    if (!open) {
      this.scheduleSkipped++
      if (this.state === 'running' || this.state === 'idle') this.setState('idle', `outsideSchedule: "${gate!.scheduleName}" until ${gate!.nextChangeLocal ?? 'never'}`)
    }
    return open
  }

  /** Stops reading and analysing; resolves when the reader has exited and no detection runs. */
  async stop(): Promise<void> {
    this.running = false
    this.frames.close()
    this.stopping.abort(new Error('stream task stopped'))
    await this.stream?.stop()
    this.stream = null
    await this.loop
    await this.detecting
    this.frames.clear()
    this.pending = null
    await this.analysis.end()
    await this.analysis.writes.drained()
  }

  status(): StreamTaskStatus {
    // The rates' windows run on the monotonic clock (shared/clock.ts).
    const now = monotonicNow()
    const { framesIn } = this.frames
    const framesDropped = this.frames.dropped + this.slotDropped
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
      inputFps: this.frames.inputRate.perSecond(now),
      processedFps: this.processedRate.perSecond(now),
      framesIn,
      framesDropped,
      framesProcessed: this.framesProcessed,
      framesFailed: this.framesFailed,
      motionSkipped: this.gate.motionSkipped,
      trackedSkipped: this.gate.trackedSkipped,
      regionFrames: this.analysis.regionFrames,
      scheduleSkipped: this.scheduleSkipped,
      discardRate: framesIn > 0 ? Math.round((framesDropped / framesIn) * 10_000) / 10_000 : 0,
      detectorLatencyP50Ms: this.analysis.detectorLatency.percentile(50),
      detectorLatencyP99Ms: this.analysis.detectorLatency.percentile(99),
      criticalPathLatencyP99Ms: this.analysis.criticalLatency.percentile(99),
      eventWriteP99Ms: this.analysis.writes.delay.percentile(99),
      trackedObjects: this.analysis.tracker.active,
      objectsEntered: this.analysis.objectsEntered,
      lastError: this.lastError,
      createdAt: String(this.row.createdAt),
    }
  }
}
