import type { DetectionResultCore } from '../../../shared/inference/types.ts'
import type { Frame } from '../../cameras/reader.ts'
import type { Track } from '../tracker.ts'
import type { StreamTaskRow } from '../task.ts'

/** What one detection on one frame of a stream task produced, after tracking. */
export interface FrameAnalysis {
  frame: Frame
  /** The pipeline's answer for the frame (areas, targets, logic results). */
  result: DetectionResultCore
  /** The confirmed objects tracked after this frame (boxes updated). */
  tracks: readonly Track[]
  /** Objects confirmed on this frame. */
  entered: readonly Track[]
  /** Objects that ended on this frame (not seen for the leave delay). */
  left: readonly Track[]
  /**
   * Queues a write of events (with their snapshots) for this frame, after the ones queued before
   * and off the frame loop (runtime/streams/event-writes.ts); what it reads of a track, take
   * with `trackNow` first.
   */
  later(write: () => Promise<unknown>): Promise<void>
}

/**
 * A part that reacts to a stream task's analyses — object events, counters, alarm policies,
 * recognition — without the frame loop knowing it (the way Frigate keeps detectors as plugins).
 * Observers run in order, after each detection, on the task's own loop: keep them quick, and
 * write events through `later`.
 */
export interface StreamObserver {
  onAnalysis?(analysis: FrameAnalysis): Promise<void>
  /** The task stops: `left` are the objects still tracked, which leave now. */
  onStop?(left: readonly Track[]): Promise<void>
}

/** Makes the observer of one task run (a new one each time the task starts). */
export type StreamObserverFactory = (row: StreamTaskRow) => StreamObserver
