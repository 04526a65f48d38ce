/**
 * Which stream task result belongs to the frame a live tile shows (docs/recording-and-live-view.md
 * "Boxes on the frame shown"). Each overlay result says where its analysed frame is in the
 * session's video (`mediaTime`, seconds); the player says which frame it presents
 * (requestVideoFrameCallback's `mediaTime`). Pure: unit tested on its own.
 */

export interface OverlayBox { x: number; y: number; width: number; height: number }
export interface OverlayResult {
  time: number
  /** Where the analysed frame is in the session's video, s; null when the stream has no reception timestamps. */
  mediaTime: number | null
  width: number
  height: number
  /** `velocity`: px per second of the picture, as the tracker saw the object move (absent before its second sighting). */
  objects: { box: OverlayBox; label: string; confidence: number; velocity?: { x: number; y: number } }[]
}

/** How the boxes drawn were chosen: the shown frame's own result, the task's last one (it skipped this frame), or none. */
export type Match = 'frame' | 'held' | 'none'

/** A result older than this is never held over a frame: the task stopped seeing. */
const MAX_HOLD_S = 1

/** The median gap between consecutive values (s), null with fewer than two. */
export function medianGap(times: number[]): number | null {
  const gaps = times.slice(1).map((t, i) => t - times[i]!).filter((g) => g > 0).sort((a, b) => a - b)
  return gaps.length ? gaps[Math.floor(gaps.length / 2)]! : null
}

/**
 * The result of the frame at `mediaTime`: the one whose frame is nearest, when nearer than half
 * a frame (`frameInterval`, s); else, when the task analyses fewer frames than the camera sends,
 * its newest earlier result not older than its own interval between results ("held"). Results in
 * `results` are in arrival order.
 */
export function resultForFrame(results: OverlayResult[], mediaTime: number, frameInterval: number): { result: OverlayResult | null; match: Match } {
  const placed = results.filter((r) => r.mediaTime !== null)
  let nearest: OverlayResult | null = null
  for (const r of placed) if (!nearest || Math.abs(r.mediaTime! - mediaTime) < Math.abs(nearest.mediaTime! - mediaTime)) nearest = r
  if (nearest && Math.abs(nearest.mediaTime! - mediaTime) <= frameInterval / 2) return { result: nearest, match: 'frame' }
  const taskInterval = medianGap(placed.map((r) => r.mediaTime!)) ?? frameInterval
  const hold = Math.min(MAX_HOLD_S, Math.max(taskInterval, frameInterval) * 1.5)
  let before: OverlayResult | null = null
  for (const r of placed) if (r.mediaTime! < mediaTime && (!before || r.mediaTime! > before.mediaTime!)) before = r
  if (before && mediaTime - before.mediaTime! <= hold) return { result: before, match: 'held' }
  return { result: null, match: 'none' }
}

/**
 * A result held over a later frame (`mediaTime`), its boxes moved as far as each object moves
 * in between (its velocity): a walker's box stays on the walker while the task skips frames.
 */
export function movedTo(result: OverlayResult, mediaTime: number): OverlayResult {
  const dt = result.mediaTime === null ? 0 : Math.max(0, mediaTime - result.mediaTime)
  if (dt === 0) return result
  return {
    ...result,
    objects: result.objects.map((o) => (o.velocity ? { ...o, box: { ...o.box, x: o.box.x + o.velocity.x * dt, y: o.box.y + o.velocity.y * dt } } : o)),
  }
}

/**
 * Where a label goes so that it never covers the object's top (a person's head): under the box,
 * or inside its bottom edge when the box reaches the picture's bottom. Canvas pixels; `y` is the
 * text's baseline.
 */
export function labelPlace(box: OverlayBox, textHeight: number, pictureBottom: number): { x: number; y: number } {
  const below = box.y + box.height + textHeight + 2
  return { x: box.x, y: below <= pictureBottom ? below : box.y + box.height - 3 }
}
