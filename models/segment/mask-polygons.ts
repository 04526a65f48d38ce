/**
 * Person segmentation mask → one polygon per region (spec: a target's `maskPolygon`,
 * normalized coordinates). Contours are traced with d3-contour (marching squares) at the
 * probability threshold and simplified with simplify-js (Ramer–Douglas–Peucker).
 */
import { contours } from 'd3-contour'
import simplify from 'simplify-js'

export interface MaskPolygon {
  /** Outer boundary, [x, y] normalized to the mask (0..1), not closed (first ≠ last point). */
  points: [number, number][]
  /** Area inside the outer boundary as a fraction of the mask (holes not subtracted). */
  area: number
}

export interface MaskPolygonOptions {
  /** Mask values at or above this are inside (default 0.5). */
  threshold?: number
  /** Simplification tolerance in mask pixels (default 1). */
  tolerance?: number
  /** Regions smaller than this fraction of the mask are dropped (default 0.002). */
  minArea?: number
}

/** `mask`: height × width values, row-major (e.g. the selfie model's [1, 256, 256, 1] output). */
export function maskPolygons(mask: ArrayLike<number>, width: number, height: number, options: MaskPolygonOptions = {}): MaskPolygon[] {
  const { threshold = 0.5, tolerance = 1, minArea = 0.002 } = options
  if (mask.length !== width * height) throw new RangeError(`mask has ${mask.length} values, expected ${width} × ${height}`)
  const [multiPolygon] = contours().size([width, height]).thresholds([threshold])(Array.from(mask))
  const polygons: MaskPolygon[] = []
  for (const [outer] of multiPolygon?.coordinates ?? []) {
    if (!outer || outer.length < 4) continue
    const area = Math.abs(shoelace(outer)) / (width * height)
    if (area < minArea) continue
    const ring = simplify(outer.slice(0, -1).map(([x, y]) => ({ x: x!, y: y! })), tolerance, true)
    polygons.push({ points: ring.map((p) => [clamp01(p.x / width), clamp01(p.y / height)]), area })
  }
  return polygons.sort((a, b) => b.area - a.area)
}

function shoelace(ring: number[][]): number {
  let sum = 0
  for (let i = 0; i < ring.length - 1; i++) sum += ring[i]![0]! * ring[i + 1]![1]! - ring[i + 1]![0]! * ring[i]![1]!
  return sum / 2
}

const clamp01 = (v: number) => Math.min(Math.max(v, 0), 1)
