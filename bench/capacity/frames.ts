import type { TaskName } from '../case/constants.ts'

/**
 * One frame a simulated channel offered during a step, and what became of it. The capacity
 * runner records one per offered frame; every figure of a step is computed from these.
 *
 * - `processed`: the frame path returned a result.
 * - `discarded`: the channel's bounded queue was full when the frame arrived (spec 2.8).
 * - `failed`: the frame path answered an error for it.
 * - `pending`: still queued or in flight when the step's hold ended.
 *
 * `failed` and `pending` frames are the missing ones: offered, not discarded, no result.
 */
export type FrameFate = 'processed' | 'discarded' | 'failed' | 'pending'

export interface FrameRecord {
  task: TaskName
  /** 0-based channel index. */
  channel: number
  /** Milliseconds since the step started, when the channel produced the frame. */
  offeredAtMs: number
  fate: FrameFate
  /** When the result (or error) came back, ms since the step started; null if it never did. */
  completedAtMs: number | null
  /** Time the detector node took, as the frame path measured it; null when not reported. */
  detectorLatencyMs: number | null
}

/** Machine-wide resource peaks over a step (accelerator figures null: the device has none). */
export interface ResourcePeaks {
  cpuPeakPercent: number | null
  memoryPeakPercent: number | null
  acceleratorPeakPercent: number | null
  acceleratorMemoryPeakPercent: number | null
}
