/** Plane geometry used by decoders, crops, regions and NMS. Points are {x, y} in pixels. */
export interface Point { x: number; y: number }
export interface Box { x: number; y: number; width: number; height: number }

export function iou(a: Box, b: Box): number {
  const x1 = Math.max(a.x, b.x), y1 = Math.max(a.y, b.y)
  const x2 = Math.min(a.x + a.width, b.x + b.width), y2 = Math.min(a.y + a.height, b.y + b.height)
  const inter = Math.max(0, x2 - x1) * Math.max(0, y2 - y1)
  const union = a.width * a.height + b.width * b.height - inter
  return union > 0 ? inter / union : 0
}

export function polygonArea(points: Point[]): number {
  let s = 0
  for (let i = 0, j = points.length - 1; i < points.length; j = i++) s += points[j]!.x * points[i]!.y - points[i]!.x * points[j]!.y
  return Math.abs(s) / 2
}

export function polygonPerimeter(points: Point[]): number {
  let s = 0
  for (let i = 0, j = points.length - 1; i < points.length; j = i++) s += Math.hypot(points[i]!.x - points[j]!.x, points[i]!.y - points[j]!.y)
  return s
}

/** Ray casting; points on the edge may fall either way. */
export function pointInPolygon(p: Point, polygon: Point[]): boolean {
  let inside = false
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const a = polygon[i]!, b = polygon[j]!
    if ((a.y > p.y) !== (b.y > p.y) && p.x < ((b.x - a.x) * (p.y - a.y)) / (b.y - a.y) + a.x) inside = !inside
  }
  return inside
}

/** Andrew's monotone chain. */
export function convexHull(points: Point[]): Point[] {
  const pts = [...points].sort((a, b) => a.x - b.x || a.y - b.y)
  if (pts.length < 3) return pts
  const cross = (o: Point, a: Point, b: Point) => (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x)
  const lower: Point[] = [], upper: Point[] = []
  for (const p of pts) {
    while (lower.length >= 2 && cross(lower[lower.length - 2]!, lower[lower.length - 1]!, p) <= 0) lower.pop()
    lower.push(p)
  }
  for (let i = pts.length - 1; i >= 0; i--) {
    const p = pts[i]!
    while (upper.length >= 2 && cross(upper[upper.length - 2]!, upper[upper.length - 1]!, p) <= 0) upper.pop()
    upper.push(p)
  }
  upper.pop(); lower.pop()
  return lower.concat(upper)
}

/**
 * Minimum-area enclosing rectangle (rotating calipers over the hull edges), returned as 4
 * corners ordered top-left, top-right, bottom-right, bottom-left as PaddleOCR orders them.
 */
export function minAreaRect(points: Point[]): { corners: Point[]; width: number; height: number } {
  const hull = convexHull(points)
  let best = { area: Infinity, corners: [] as Point[], width: 0, height: 0 }
  for (let i = 0; i < hull.length; i++) {
    const a = hull[i]!, b = hull[(i + 1) % hull.length]!
    const len = Math.hypot(b.x - a.x, b.y - a.y)
    if (len === 0) continue
    const ux = (b.x - a.x) / len, uy = (b.y - a.y) / len
    let minU = Infinity, maxU = -Infinity, minV = Infinity, maxV = -Infinity
    for (const p of hull) {
      const u = p.x * ux + p.y * uy, v = -p.x * uy + p.y * ux
      minU = Math.min(minU, u); maxU = Math.max(maxU, u); minV = Math.min(minV, v); maxV = Math.max(maxV, v)
    }
    const area = (maxU - minU) * (maxV - minV)
    if (area < best.area) {
      const at = (u: number, v: number) => ({ x: u * ux - v * uy, y: u * uy + v * ux })
      best = { area, corners: [at(minU, minV), at(maxU, minV), at(maxU, maxV), at(minU, maxV)], width: maxU - minU, height: maxV - minV }
    }
  }
  if (best.corners.length === 0) {
    const xs = points.map((p) => p.x), ys = points.map((p) => p.y)
    const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys)
    best = { area: 0, corners: [{ x: x0, y: y0 }, { x: x1, y: y0 }, { x: x1, y: y1 }, { x: x0, y: y1 }], width: x1 - x0, height: y1 - y0 }
  }
  return { corners: orderCorners(best.corners), width: best.width, height: best.height }
}

/** Orders 4 corners: top-left, top-right, bottom-right, bottom-left (PaddleOCR get_mini_boxes). */
export function orderCorners(c: Point[]): Point[] {
  const byX = [...c].sort((a, b) => a.x - b.x)
  const [l1, l2, r1, r2] = byX as [Point, Point, Point, Point]
  const [tl, bl] = l1.y <= l2.y ? [l1, l2] : [l2, l1]
  const [tr, br] = r1.y <= r2.y ? [r1, r2] : [r2, r1]
  return [tl, tr, br, bl]
}

/** Grows a rectangle (4 ordered corners) outward by `distance` on every side. */
export function expandRect(corners: Point[], distance: number): Point[] {
  const cx = corners.reduce((s, p) => s + p.x, 0) / 4, cy = corners.reduce((s, p) => s + p.y, 0) / 4
  const [tl, tr, , bl] = corners as [Point, Point, Point, Point]
  const ulen = Math.hypot(tr.x - tl.x, tr.y - tl.y) || 1, vlen = Math.hypot(bl.x - tl.x, bl.y - tl.y) || 1
  const u = { x: (tr.x - tl.x) / ulen, y: (tr.y - tl.y) / ulen }, v = { x: (bl.x - tl.x) / vlen, y: (bl.y - tl.y) / vlen }
  const hu = ulen / 2 + distance, hv = vlen / 2 + distance
  return [
    { x: cx - u.x * hu - v.x * hv, y: cy - u.y * hu - v.y * hv },
    { x: cx + u.x * hu - v.x * hv, y: cy + u.y * hu - v.y * hv },
    { x: cx + u.x * hu + v.x * hv, y: cy + u.y * hu + v.y * hv },
    { x: cx - u.x * hu + v.x * hv, y: cy - u.y * hu + v.y * hv },
  ]
}

export function boundingBox(points: Point[]): Box {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity
  for (const p of points) { x0 = Math.min(x0, p.x); y0 = Math.min(y0, p.y); x1 = Math.max(x1, p.x); y1 = Math.max(y1, p.y) }
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 }
}
