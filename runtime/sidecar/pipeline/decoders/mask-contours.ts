import type * as ort from 'onnxruntime-node'
import type { MaskContoursDecoder } from '../../../../models/manifest-schema.ts'
import { maskPolygons } from '../../../../models/segment/mask-polygons.ts'
import { boundingBox } from '../geometry.ts'
import type { Detection } from '../detection.ts'
import type { PreparedInput } from '../rgb-image.ts'

/**
 * Segmentation mask ([1, H, W, 1] or [1, 1, H, W] probabilities over the input) → one
 * detection per region: its polygon (d3-contour + simplify-js, models/segment) in source
 * pixels, the polygon's bounding box, and as score the mean probability of the region's
 * mask cells (those at or above the threshold inside the box).
 */
export function createMaskContoursDecoder(decoder: MaskContoursDecoder) {
  return (outputs: Record<string, ort.Tensor>, input: PreparedInput, threshold: number): Detection[] => {
    const tensor = decoder.output ? outputs[decoder.output] : Object.values(outputs)[0]
    if (!tensor) throw new Error(`model output ${decoder.output ?? '(first)'} is missing`)
    const dims = tensor.dims
    const [h, w] = dims.length === 4 && dims[3] === 1 ? [dims[1]!, dims[2]!] : [dims[dims.length - 2]!, dims[dims.length - 1]!]
    const mask = tensor.data as Float32Array
    const nchw = input.dims[1] === 3
    const tensorW = input.dims[nchw ? 3 : 2]!, tensorH = input.dims[nchw ? 2 : 1]!
    // mask cell → input pixel → source pixel (the input's content sits at its top-left).
    const fx = (tensorW / w) * input.scaleX, fy = (tensorH / h) * input.scaleY
    const out: Detection[] = []
    for (const region of maskPolygons(mask, w, h, { threshold: decoder.maskThreshold, tolerance: decoder.tolerance, minArea: decoder.minArea })) {
      const polygon = region.points.map(([x, y]) => ({ x: x * w * fx, y: y * h * fy }))
      const box = boundingBox(polygon)
      let sum = 0, n = 0
      const y1 = Math.min(h, Math.ceil((box.y + box.height) / fy)), x1 = Math.min(w, Math.ceil((box.x + box.width) / fx))
      for (let y = Math.max(0, Math.floor(box.y / fy)); y < y1; y++)
        for (let x = Math.max(0, Math.floor(box.x / fx)); x < x1; x++) {
          const v = mask[y * w + x]!
          if (v >= decoder.maskThreshold) { sum += v; n++ }
        }
      const score = n > 0 ? sum / n : 0
      if (score >= threshold) out.push({ box, score, classIndex: 0, polygon })
    }
    return out
  }
}
