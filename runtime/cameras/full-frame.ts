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
  nextFrame(timeoutMs: number): Promise<Frame | null>
}

export interface FullFrameTiming {
  /** The frame may be at most this far (ms) from the analysed frame's time (SNAPSHOT_MAX_SKEW_MS). */
  maxSkewMs: number
  /** How far apart the source's frames are (1000 / CAMERA_MONITOR_FPS). */
  periodMs: number
  now(): number
}

/**
 * The camera's frame at its own size nearest to `at` (the analysed frame's decode time, ms since
 * epoch), from its own reader: the latest frame when the next one, expected a period after it,
 * cannot be nearer; else the next one, waited for no longer than it could still be nearer and
 * no later than `at + maxSkewMs`. Throws FullFrameUnavailable when the camera has no frame or
 * the nearest is further than maxSkewMs from `at` (too late, or the source stalls).
 */
export async function nearestFullFrame(source: FullFrameSource, at: number, timing: FullFrameTiming): Promise<Frame> {
  const latest = source.latest
  if (source.status !== 'online' || !latest) throw new FullFrameUnavailable(`the camera's own reader has no frame (${source.status})`)
  const tooFar = (skew: number) => new FullFrameUnavailable(`too late: the nearest frame at the camera's size is ${Math.round(skew)} ms from the analysed frame (SNAPSHOT_MAX_SKEW_MS ${timing.maxSkewMs})`)
  const skew = Math.abs(latest.time - at)
  // A frame after the analysed one: a later one is further still.
  if (latest.time >= at || skew <= latest.time + timing.periodMs - at) {
    if (skew <= timing.maxSkewMs) return latest
    throw tooFar(skew)
  }
  // The next frame may be nearer: wait for it while it can still be nearer than the latest, and within the bound.
  const waitUntil = at + Math.min(skew, timing.maxSkewMs)
  const next = await source.nextFrame(waitUntil - timing.now())
  const best = next && Math.abs(next.time - at) < skew ? next : latest
  const bestSkew = Math.abs(best.time - at)
  if (bestSkew <= timing.maxSkewMs) return best
  throw tooFar(bestSkew)
}
