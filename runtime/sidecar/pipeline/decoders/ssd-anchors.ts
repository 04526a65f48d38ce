import type * as ort from 'onnxruntime-node'
import type { SsdDecoder } from '../../../../models/manifest-schema.ts'
import { generateSsdAnchors, type Anchor } from '../anchors.ts'
import type { Detection } from '../detection.ts'
import type { PreparedInput } from '../rgb-image.ts'

const concat = (outputs: Record<string, ort.Tensor>, names: string[]): Float32Array => {
  const parts = names.map((n) => {
    const t = outputs[n]
    if (!t) throw new Error(`model output ${n} is missing`)
    return t.data as Float32Array
  })
  const out = new Float32Array(parts.reduce((s, p) => s + p.length, 0))
  let at = 0
  for (const p of parts) { out.set(p, at); at += p.length }
  return out
}

/**
 * Decodes an anchor-based single-shot detector (MediaPipe TensorsToDetectionsCalculator):
 * sigmoid scores (clipped), box centre/size and keypoints regressed relative to anchors, all
 * in model-input pixels divided by `coordScale`. Returns detections in source pixels.
 */
export function createSsdDecoder(decoder: SsdDecoder) {
  const anchors: Anchor[] = generateSsdAnchors(decoder.anchors)
  const inW = decoder.anchors.inputSizeWidth, inH = decoder.anchors.inputSizeHeight
  const [xs, ys, ws, hs] = decoder.coordScale as [number, number, number, number]
  return (outputs: Record<string, ort.Tensor>, input: PreparedInput, threshold: number): Detection[] => {
    const scores = concat(outputs, decoder.scoreOutputs)
    const raw = concat(outputs, decoder.regressorOutputs)
    if (scores.length !== anchors.length || raw.length !== anchors.length * decoder.numCoords)
      throw new Error(`detector output has ${scores.length} scores for ${anchors.length} anchors`)
    // Input pixels → source pixels (content may be letterboxed at the top-left).
    const toX = (nx: number) => nx * inW * input.scaleX
    const toY = (ny: number) => ny * inH * input.scaleY
    const out: Detection[] = []
    for (let i = 0; i < anchors.length; i++) {
      const clipped = Math.max(-decoder.scoreClip, Math.min(decoder.scoreClip, scores[i]!))
      const score = 1 / (1 + Math.exp(-clipped))
      if (score < threshold) continue
      const a = anchors[i]!, r = i * decoder.numCoords
      const cx = (raw[r]! / xs) * a.width + a.xCenter
      const cy = (raw[r + 1]! / ys) * a.height + a.yCenter
      const w = (raw[r + 2]! / ws) * a.width
      const h = (raw[r + 3]! / hs) * a.height
      if (!(w > 0 && h > 0)) continue
      const keypoints = []
      for (let k = 0; k < decoder.numKeypoints; k++) {
        const kx = (raw[r + 4 + 2 * k]! / xs) * a.width + a.xCenter
        const ky = (raw[r + 5 + 2 * k]! / ys) * a.height + a.yCenter
        keypoints.push({ x: toX(kx), y: toY(ky) })
      }
      out.push({
        box: { x: toX(cx - w / 2), y: toY(cy - h / 2), width: toX(w), height: toY(h) },
        score,
        classIndex: 0,
        ...(decoder.numKeypoints > 0 ? { keypoints } : {}),
      })
    }
    return out
  }
}
