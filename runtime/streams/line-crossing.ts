/** A point in ratios of the picture (0..1 of its width and height). */
export interface Point { x: number; y: number }

/**
 * A point closer to the line than this (in ratios of the picture) is on no side: a box that
 * jitters by a few pixels while its object stands on the line does not count again and again.
 */
export const DEAD_ZONE = 0.02

/** Which side of the line a → b the point is on: 1 right, -1 left (looking from a to b, y down), 0 within the dead zone. */
export function sideOf(a: Point, b: Point, p: Point): -1 | 0 | 1 {
  const length = Math.hypot(b.x - a.x, b.y - a.y)
  const distance = ((b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x)) / length
  return distance > DEAD_ZONE ? 1 : distance < -DEAD_ZONE ? -1 : 0
}

/** Where the line through p0 → p1 meets the line a → b, as a fraction of a → b (NaN when parallel). */
function meetsAt(a: Point, b: Point, p0: Point, p1: Point): number {
  const cross = (u: Point, v: Point) => u.x * v.y - u.y * v.x
  const ab = { x: b.x - a.x, y: b.y - a.y }
  const move = { x: p1.x - p0.x, y: p1.y - p0.y }
  return cross({ x: p0.x - a.x, y: p0.y - a.y }, move) / cross(ab, move)
}

/** Where an object was last seen clearly on one side of a line. */
export interface LineState { side: -1 | 1; at: Point }

/**
 * Follows one object across one line segment: `in` when it moved from the left side to the
 * right side through the segment, `out` the other way, null otherwise. `state` is the object's
 * last clear side (none at its first sighting); the new state is returned with the crossing.
 */
export function follow(a: Point, b: Point, state: LineState | undefined, p: Point): { state: LineState | undefined; crossing: 'in' | 'out' | null } {
  const side = sideOf(a, b, p)
  if (side === 0) return { state, crossing: null }
  const next = { side, at: p }
  if (!state || state.side === side) return { state: next, crossing: null }
  const t = meetsAt(a, b, state.at, p)
  return { state: next, crossing: t >= 0 && t <= 1 ? (side === 1 ? 'in' : 'out') : null }
}
