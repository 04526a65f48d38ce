import type { TargetBox } from '../../shared/inference/types.ts'
import type { Motion } from './motion.ts'

export interface GateSettings {
  /** With nothing tracked and nothing moving, and for a tracked object that stands still: the detector runs at least this often. */
  minDetectIntervalMs: number
  /** While every motion lies on the tracked objects: the detector runs this often (the tracker carries their boxes between). */
  trackedDetectIntervalMs: number
  /** Follow a walking object at the frame rate (WALKING_SHARE): the task counts crossings of lines. */
  followWalkers: boolean
}

/** A tracked object's box where the tracker predicts it on this frame, in the frame's pixels. */
export interface TrackedBox {
  box: TargetBox
  /** Seen often enough to be an object; a tentative one does not cover its motion (it is confirmed at the frame rate). */
  confirmed: boolean
}

/**
 * Why the detector runs on a frame, or why not:
 * - `motion`: something moved and nothing is tracked;
 * - `newMotion`: motion off the tracked objects (someone new, or an object the tracker lost);
 * - `walking`: a tracked object moves as a whole (WALKING_SHARE) and the task counts line crossings;
 * - `interval`: the interval that applies ran out (minDetectIntervalMs with nothing tracked,
 *   trackedDetectIntervalMs while objects are);
 * - `stationary`: a tracked object shows no motion, checked at minDetectIntervalMs;
 * - `still` (skipped): nothing moved and nothing is tracked;
 * - `tracked` (skipped): every motion lies on the tracked objects, their interval runs.
 */
export type GateDecision =
  | { detect: true; reason: 'motion' | 'newMotion' | 'walking' | 'interval' | 'stationary' }
  | { detect: false; reason: 'still' | 'tracked' }

/**
 * How far around a tracked box its own motion may reach, as a share of the box's width and
 * height on each side: arms and tools, and the tracker's prediction being a step off. Chosen
 * by replaying one-by-one-person-detection.mp4 (bench/motion-gating.bench.ts): people working
 * at a table stay within it, a walker soon reaches past it; at 0.1 the arms trigger the
 * detector half as often again, from 0.35 walkers leave to the interval before they are seen.
 */
export const TRACKED_MARGIN = 0.25

/**
 * A motion region at least this share of a tracked box's area means the object moves as a
 * whole (walks) rather than in parts (arms at a table). A task with counter lines follows it at
 * the frame rate, as Frigate detects moving objects on every frame, so the line sees its last
 * steps before it leaves (on the footage, a person leaving passes the exit line within a
 * frame or two of vanishing); others leave it to the interval and the tracker's prediction.
 */
export const WALKING_SHARE = 0.5

const area = (box: TargetBox) => box.width * box.height
const grow = (box: TargetBox, share: number): TargetBox => ({
  x: box.x - box.width * share, y: box.y - box.height * share, width: box.width * (1 + 2 * share), height: box.height * (1 + 2 * share),
})
const contains = (outer: TargetBox, inner: TargetBox) =>
  inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.width <= outer.x + outer.width && inner.y + inner.height <= outer.y + outer.height
const overlaps = (a: TargetBox, b: TargetBox) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height

/**
 * Motion gating, as Frigate drives detection by motion regions: with nothing tracked the
 * detector runs on motion and at the minimum interval; with objects tracked it runs at once
 * for motion off their boxes (as much as counts as motion on its own) and, counting line
 * crossings, for an object that walks; otherwise at the tracked interval, or at the minimum
 * interval if shorter when an object shows no motion at all (it may stand still, or have gone
 * without a trace).
 */
export function decide(motion: Motion, tracked: TrackedBox[], sinceDetectMs: number, settings: GateSettings): GateDecision {
  if (tracked.length === 0) {
    if (motion.moved) return { detect: true, reason: 'motion' }
    return sinceDetectMs >= settings.minDetectIntervalMs ? { detect: true, reason: 'interval' } : { detect: false, reason: 'still' }
  }
  const boxes = tracked.filter((t) => t.confirmed).map((t) => t.box)
  const covers = boxes.map((box) => grow(box, TRACKED_MARGIN))
  let off = 0
  for (const region of motion.regions) if (!covers.some((cover) => contains(cover, region.box))) off += region.cells
  if (off >= motion.minCells) return { detect: true, reason: 'newMotion' }
  const walking = settings.followWalkers && boxes.some((box) => motion.regions.some((region) => overlaps(box, region.box) && area(region.box) >= WALKING_SHARE * area(box)))
  if (walking) return { detect: true, reason: 'walking' }
  if (sinceDetectMs >= settings.trackedDetectIntervalMs) return { detect: true, reason: 'interval' }
  const stationary = covers.some((cover) => !motion.regions.some((region) => overlaps(cover, region.box)))
  return stationary && sinceDetectMs >= settings.minDetectIntervalMs ? { detect: true, reason: 'stationary' } : { detect: false, reason: 'tracked' }
}
