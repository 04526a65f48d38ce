import type * as ort from 'onnxruntime-node'
import { decodeCenternet } from '../../../../models/detect/centernet.ts'
import type { CenternetDecoder } from '../../../../models/manifest-schema.ts'
import type { Detection } from '../detection.ts'
import type { PreparedInput } from '../rgb-image.ts'

/**
 * CenterNet rows → detections in source pixels. The row decoding and class-wise NMS are
 * models/detect's (boxes normalized to the square input); the input tensor's content sits
 * at its top-left (letterbox), so input pixels × scale = source pixels.
 */
export function createCenternetDecoder(decoder: CenternetDecoder) {
  return (outputs: Record<string, ort.Tensor>, input: PreparedInput, threshold: number): Detection[] => {
    const tensor = outputs[decoder.output]
    if (!tensor) throw new Error(`model output ${decoder.output} is missing`)
    const nchw = input.dims[1] === 3
    const inW = input.dims[nchw ? 3 : 2]!, inH = input.dims[nchw ? 2 : 1]!
    const found = decodeCenternet({ dims: tensor.dims, data: tensor.data as Float32Array }, {
      minScore: threshold, iouThreshold: decoder.iouThreshold, maxDetections: decoder.maxDetections,
      ...(decoder.classes ? { classes: decoder.classes } : {}),
    })
    return found.map((d) => {
      const x1 = d.box.x1 * inW * input.scaleX, y1 = d.box.y1 * inH * input.scaleY
      const x2 = d.box.x2 * inW * input.scaleX, y2 = d.box.y2 * inH * input.scaleY
      return { box: { x: x1, y: y1, width: x2 - x1, height: y2 - y1 }, score: d.score, classIndex: d.classId }
    })
  }
}
