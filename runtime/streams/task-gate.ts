import type { TargetBox } from '../../shared/inference/types.ts'
import type { TaskConfig } from '../../shared/tasks/types.ts'
import type { Frame } from '../cameras/reader.ts'
import { inFramePixels, regionInputSide } from './analysis-size.ts'
import { decide, type GateSettings } from './gating.ts'
import { MotionDetector } from './motion.ts'
import { cropsFor } from './regions.ts'
import type { StreamTaskDeps, StreamTaskRow } from './task.ts'
import type { IouTracker } from './tracker.ts'

/**
 * A stream task's motion gate on every frame (runtime/streams/gating.ts): whether the
 * detector runs on it, and on which motion regions (docs/cameras-and-stream-tasks.md
 * "Detection on motion regions"). Counts the frames it skips.
 */
export class TaskGate {
  private readonly motion = new MotionDetector()
  private readonly settings: GateSettings
  /** The smallest crop side (the detector's input side), null: the whole frame always (runtime/streams/regions.ts). */
  private readonly regionSide: number | null
  /** When the frame last sent to the detector was decoded (its monotonic `at`; none yet: -Infinity). */
  private lastDetectAt = -Infinity
  motionSkipped = 0
  trackedSkipped = 0

  constructor(private readonly row: StreamTaskRow, deps: Pick<StreamTaskDeps, 'algorithms' | 'regionDetection'>) {
    const { minDetectIntervalMs, trackedDetectIntervalMs, taskConfig } = row
    this.motion.mask(((taskConfig as TaskConfig).motionMasks ?? []).map((m) => m.polygon))
    this.settings = { minDetectIntervalMs, trackedDetectIntervalMs, followWalkers: Array.isArray(taskConfig.counters) && taskConfig.counters.length > 0 }
    this.regionSide = row.motionGating && row.regionDetection && deps.regionDetection !== false
      ? regionInputSide(deps.algorithms.get(row.algorithmCode)?.manifest, taskConfig as { regions?: unknown[]; detectorInputSize?: number })
      : null
  }

  /**
   * The frame for the detector, with the regions to detect it on (`crops` null: the whole
   * frame), or null when the gate skips it. `lastWholeAt`: when the frame last detected whole
   * was decoded.
   */
  check(frame: Frame, tracker: IouTracker, lastWholeAt: number): { crops: TargetBox[] | null } | null {
    // Motion gating (runtime/streams/gating.ts): the tracked boxes where the tracker predicts them on this frame.
    let crops: TargetBox[] | null = null
    if (this.row.motionGating) {
      const motion = this.motion.detect(frame.rgb, frame.width, frame.height, frame.at)
      const tracked = tracker.predict(frame.at).map(({ track, box }) => ({ box: inFramePixels(box, frame), confirmed: track.confirmed }))
      const decision = decide(motion, tracked, frame.at - this.lastDetectAt, this.settings)
      if (!decision.detect) {
        this.motionSkipped++
        if (decision.reason === 'tracked') this.trackedSkipped++
        return null
      }
      // Detection on motion regions (docs/cameras-and-stream-tasks.md "Detection on motion regions").
      crops = cropsFor({
        side: this.regionSide, reason: decision.reason, sinceWholeMs: frame.at - lastWholeAt, minDetectIntervalMs: this.row.minDetectIntervalMs,
        motion: motion.regions.map((region) => region.box), tracked: tracked.map((t) => t.box), frame: { width: frame.width, height: frame.height },
      })
    }
    // The intervals count from the frame sent, not from when its turn comes.
    this.lastDetectAt = frame.at
    return { crops }
  }
}
