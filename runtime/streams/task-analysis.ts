import type { TargetBox } from '../../shared/inference/types.ts'
import { MAX_TRACKED_DETECT_INTERVAL_MS, type StreamTaskResult } from '../../shared/streams/types.ts'
import { monotonicNow } from '../../shared/clock.ts'
import type { Frame } from '../cameras/reader.ts'
import { inSourcePixels } from './analysis-size.ts'
import { EventWrites } from './event-writes.ts'
import type { StreamObserver } from './observers/index.ts'
import { detectCrops } from './regions.ts'
import { Samples } from './stats.ts'
import type { StreamTaskDeps, StreamTaskRow } from './task.ts'
import { IouTracker, type Detection } from './tracker.ts'

/**
 * Tracking: overlap that continues a track, sightings that make an object, absence that ends
 * it, and how long an unseen track moves on along its velocity (the longest tracked interval).
 */
export const TRACKING = { minIou: 0.2, maxCentreShift: 0.6, maxSidesPerSecond: 0.8, maxLateShift: 1.5, confirmHits: 2, leaveAfterMs: 2500, maxPredictMs: MAX_TRACKED_DETECT_INTERVAL_MS }
/** How long a tentative object keeps the camera's reader at its burst rate: past the next detection (at least every minDetectIntervalMs, 1000 by default). */
const ARM_MS = 1500

type AnalysisDeps = Pick<StreamTaskDeps, 'log' | 'inference' | 'observers' | 'metrics' | 'snapshots'>

/**
 * What a stream task does with a frame the gate sent to the detector: detection (on motion
 * regions or the whole frame) → tracker → observers, whose events are written in order off
 * the frame loop, and the snapshots of objects about to be confirmed
 * (docs/cameras-and-stream-tasks.md "Snapshots"). The frame loop, the gate and the detector's
 * turns are the task's (task.ts).
 */
export class TaskAnalysis {
  readonly tracker = new IouTracker(TRACKING)
  /** Events written in order off the frame loop (a snapshot may wait for its full-resolution frame). */
  readonly writes: EventWrites
  readonly detectorLatency = new Samples()
  readonly criticalLatency = new Samples()
  /** When the frame last detected whole was decoded. */
  lastWholeAt = -Infinity
  regionFrames = 0
  objectsEntered = 0
  /** The detector's latest result on this task's frames (live view overlay). */
  latest: StreamTaskResult | null = null
  private observers: StreamObserver[] = []

  constructor(private readonly row: StreamTaskRow, private readonly handle: string, private readonly deps: AnalysisDeps) {
    this.writes = new EventWrites(deps.log.child({ taskId: row.taskId }))
  }

  /** Fresh observers: the task starts, or its schedule turns on. */
  begin(): void {
    this.observers = this.deps.observers.map((make) => make(this.row))
  }

  /** The tracked objects leave: the events still waiting for their snapshots first, so an object's object.left comes after its object.entered. */
  async end(): Promise<void> {
    const left = this.tracker.clear()
    await this.writes.drained()
    for (const observer of this.observers) await observer.onStop?.(left)
  }

  /**
   * Detection → tracker → observers, on a frame the gate sent to the detector. The detector's
   * turn ends with the detection (`endTurn`): what the observers wait for (a snapshot's
   * full-resolution frame, the event store) must not hold another task's detection.
   */
  async process(frame: Frame, crops: TargetBox[] | null, endTurn: () => void): Promise<void> {
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
      this.lastWholeAt = frame.at
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
    const { entered, left } = this.tracker.update(detections, frame.at)
    // The live view draws these over the camera's picture: its own size and pixels, each box with its track's movement.
    this.latest = {
      taskId: this.row.taskId, cameraId: this.row.cameraId, time: frame.time, pts: frame.pts ?? null, width: frame.source.width, height: frame.source.height,
      objects: detections.map((detection) => {
        const { box, label, confidence } = detection
        const moving = this.tracker.trackOf(detection)?.recentVelocity
        return { box, label, confidence, ...(moving ? { velocity: { x: moving.x * 1000, y: moving.y * 1000 } } : {}) }
      }),
    }
    // A tentative object is confirmed at its next sighting, an object.entered with a snapshot: the camera's reader keeps
    // its frames at the burst rate until then (docs/cameras-and-stream-tasks.md "Snapshots").
    if (this.tracker.hasTentative) this.deps.snapshots?.arm(this.row.cameraId, frame, ARM_MS)
    this.objectsEntered += entered.length
    const analysis = { frame, result, tracks: this.tracker.objects, entered, left, later: (write: () => Promise<unknown>) => this.writes.later(frame.at, write) }
    for (const observer of this.observers) await observer.onAnalysis?.(analysis)
    this.criticalLatency.add(monotonicNow() - frame.at)
  }
}
