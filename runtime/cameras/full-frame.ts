import type { CameraStatus } from '../../shared/cameras/types.ts'
import type { Frame } from './reader.ts'

/**
 * Why no frame at the camera's own size stands in for an analysed frame: the snapshot is cut
 * from the analysed frame instead, and says why (docs/cameras-and-stream-tasks.md "Snapshots").
 */
export class FullFrameUnavailable extends Error {
  constructor(readonly reason: string) {
    super(reason)
  }
}

/** What the search reads: a camera's own reader (CameraChannel), which decodes it at its own size. */
export interface FullFrameSource {
  status: CameraStatus
  latest: Frame | null
  /** Its last frames, oldest first (the latest last). */
  recent: readonly Frame[]
  nextFrame(timeoutMs: number): Promise<Frame | null>
  /** Holds its reader at the burst rate until the answered release is called. */
  holdBurst(): () => void
}

export interface FullFrameTiming {
  /** The frame may be at most this far (ms) after the analysed frame, and is waited for until then (SNAPSHOT_MAX_SKEW_MS). */
  maxSkewMs: number
  now(): number
}

/**
 * A frame of the camera's reader at most this far (ms) before the analysed frame is the same
 * moment: two processes reading one RTSP camera stamp the same frame with the time each
 * received it (ffmpeg.ts WALLCLOCK_INPUT), a few ms apart; 15 ms is under half the period of
 * a 30 fps camera, so an earlier frame of the camera is always further.
 */
export const SAME_MOMENT_MS = 15

/** A full-resolution frame for an analysed one, and how far (ms) after it it is (-SAME_MOMENT_MS..maxSkewMs). */
export interface FullFrame {
  frame: Frame
  skewMs: number
}

/**
 * How far `frame` is after `analysed` (ms, negative before): on the time line both readers share,
 * when each was received (`pts`, RTSP), else when each was decoded.
 */
export const skewOf = (frame: Frame, analysed: Frame) =>
  frame.pts != null && analysed.pts != null ? frame.pts - analysed.pts : frame.at - analysed.at

/**
 * The camera's first frame at its own size at or after `analysed` (within SAME_MOMENT_MS before
 * it: the same frame), from its own reader: the first of its last frames that is one, else the next ones,
 * with the reader raised to its burst rate while it waits (docs/cameras-and-stream-tasks.md
 * "Snapshots"), waited for until `maxSkewMs` after the analysed frame was decoded. Never a frame
 * of an earlier moment: an object that just came into view may not be in it. Throws
 * FullFrameUnavailable when the camera has no frame or none comes in time.
 */
export async function fullFrameAfter(source: FullFrameSource, analysed: Frame, timing: FullFrameTiming): Promise<FullFrame> {
  const latest = source.latest
  if (source.status !== 'online' || !latest) throw new FullFrameUnavailable(`the camera's own reader has no frame (${source.status})`)
  const tooLate = (skew: number | null) => new FullFrameUnavailable(skew === null
    ? `too late: no frame at the camera's size within ${timing.maxSkewMs} ms after the analysed frame (SNAPSHOT_MAX_SKEW_MS ${timing.maxSkewMs})`
    : `too late: the first frame at the camera's size after the analysed frame is ${Math.round(skew)} ms after it (SNAPSHOT_MAX_SKEW_MS ${timing.maxSkewMs})`)
  const inTime = (frame: Frame): FullFrame | null => {
    const skew = skewOf(frame, analysed)
    if (skew < -SAME_MOMENT_MS) return null
    if (skew > timing.maxSkewMs) throw tooLate(skew)
    return { frame, skewMs: skew }
  }
  // The first of the frames it has that is one (the reader may have been armed at the burst rate: the very frame analysed).
  for (const frame of source.recent.length > 0 ? source.recent : [latest]) {
    const found = inTime(frame)
    if (found) return found
  }
  const deadline = analysed.at + timing.maxSkewMs
  const release = source.holdBurst()
  try {
    for (;;) {
      const next = await source.nextFrame(deadline - timing.now())
      if (!next) throw tooLate(null)
      const found = inTime(next)
      if (found) return found
    }
  } finally {
    release()
  }
}
