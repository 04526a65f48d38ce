import type * as ort from 'onnxruntime-node'
import type { CenternetDecoder } from '../../../../models/manifest-schema.ts'
import type { Detection } from '../detection.ts'
import { nonMaxSuppression } from '../nms.ts'
import type { PreparedInput } from '../rgb-image.ts'

/**
 * CenterNet (MobileNetV3, COCO): the model's own head already picks the top-K peaks as rows
 * of x1, y1, x2, y2 (input pixels), score, class index. Rows below `threshold` or of an
 * unlisted class are dropped, the rest go through class-wise hard NMS. The input tensor's
 * content sits at its top-left (letterbox), so input pixels × scale = source pixels.
 */
export function createCenternetDecoder(decoder: CenternetDecoder) {
  const nms = { method: 'hard', iouThreshold: decoder.iouThreshold, maxDetections: decoder.maxDetections } as const
  return (outputs: Record<string, ort.Tensor>, input: PreparedInput, threshold: number): Detection[] => {
    const tensor = outputs[decoder.output]
    if (!tensor) throw new Error(`model output ${decoder.output} is missing`)
    if (tensor.dims.length !== 3 || tensor.dims[2] !== 6) throw new Error(`centernet: ${decoder.output} must be [1, N, 6], got [${tensor.dims.join(', ')}]`)
    const nchw = input.dims[1] === 3
    const inW = input.dims[nchw ? 3 : 2]!, inH = input.dims[nchw ? 2 : 1]!
    // Boxes may reach past the input's edges: clamp them to it.
    const toX = (v: number) => Math.min(Math.max(v, 0), inW) * input.scaleX
    const toY = (v: number) => Math.min(Math.max(v, 0), inH) * input.scaleY
    const data = tensor.data as Float32Array
    const candidates: Detection[] = []
    for (let at = 0; at < tensor.dims[1]! * 6; at += 6) {
      const score = data[at + 4]!, classIndex = Math.round(data[at + 5]!)
      if (score < threshold || (decoder.classes && !decoder.classes.includes(classIndex))) continue
      const left = toX(data[at]!), top = toY(data[at + 1]!)
      candidates.push({ box: { x: left, y: top, width: toX(data[at + 2]!) - left, height: toY(data[at + 3]!) - top }, score, classIndex })
    }
    return nonMaxSuppression(candidates, nms)
  }
}
