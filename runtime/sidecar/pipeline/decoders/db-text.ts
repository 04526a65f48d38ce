import { contours } from 'd3-contour'
import type * as ort from 'onnxruntime-node'
import type { DbDecoder } from '../../../../models/manifest-schema.ts'
import type { Detection } from '../detection.ts'
import { boundingBox, expandRect, minAreaRect, pointInPolygon, polygonArea, polygonPerimeter, type Point } from '../geometry.ts'
import type { PreparedInput } from '../rgb-image.ts'

/**
 * PP-OCR's DB post-processing (ppocr/postprocess/db_postprocess.py) on the probability map:
 * region outlines at `binaryThreshold` (d3-contour's marching squares), each outline's
 * minimum-area rectangle, scored by the mean probability inside it (box score), grown by
 * `unclipRatio` (distance = area × ratio / perimeter) and mapped back to source pixels.
 */
export function createDbDecoder(decoder: DbDecoder) {
  return (outputs: Record<string, ort.Tensor>, input: PreparedInput, threshold: number): Detection[] => {
    const map = outputs[decoder.output]
    if (!map) throw new Error(`model output ${decoder.output} is missing`)
    const dims = map.dims
    const h = dims[dims.length - 2]!, w = dims[dims.length - 1]!
    const prob = map.data as Float32Array
    const rings = contours().size([w, h]).smooth(false).thresholds([decoder.binaryThreshold])(Array.from(prob))
    const out: Detection[] = []
    for (const multi of rings) {
      for (const polygon of multi.coordinates) {
        if (out.length >= decoder.maxCandidates) break
        const outer = polygon[0]!.map(([x, y]) => ({ x: x!, y: y! }))
        if (outer.length < 4) continue
        const rect = minAreaRect(outer)
        if (Math.min(rect.width, rect.height) < decoder.minSize) continue
        const score = meanInside(prob, w, h, rect.corners)
        if (score < threshold) continue
        const distance = (polygonArea(rect.corners) * decoder.unclipRatio) / polygonPerimeter(rect.corners)
        const grown = minAreaRect(expandRect(rect.corners, distance))
        if (Math.min(grown.width, grown.height) < decoder.minSize + 2) continue
        const toSource = (p: Point) => ({
          x: Math.min(Math.max(p.x * input.scaleX, 0), input.contentWidth * input.scaleX),
          y: Math.min(Math.max(p.y * input.scaleY, 0), input.contentHeight * input.scaleY),
        })
        const corners = grown.corners.map(toSource)
        out.push({ box: boundingBox(corners), score, classIndex: 0, polygon: corners })
      }
    }
    return out
  }
}

/** Mean probability of the map pixels whose centres fall inside the quadrilateral. */
function meanInside(prob: Float32Array, w: number, h: number, quad: Point[]): number {
  const b = boundingBox(quad)
  const x0 = Math.max(0, Math.floor(b.x)), x1 = Math.min(w - 1, Math.ceil(b.x + b.width))
  const y0 = Math.max(0, Math.floor(b.y)), y1 = Math.min(h - 1, Math.ceil(b.y + b.height))
  let sum = 0, n = 0
  for (let y = y0; y <= y1; y++)
    for (let x = x0; x <= x1; x++)
      if (pointInPolygon({ x: x + 0.5, y: y + 0.5 }, quad)) { sum += prob[y * w + x]!; n++ }
  return n > 0 ? sum / n : 0
}
