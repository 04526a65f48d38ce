/**
 * CenterNet (MobileNetV3, COCO, 512 × 512, 0..255 RGB input) output decoding: the model's
 * own head already picks the top 100 peaks as `tower_0/detections` [1, 100, 6] rows of
 * x1, y1, x2, y2 (input pixels), score, class index.
 */
import { cocoLabels } from './coco-labels.ts'
import { nonMaxSuppression } from './nms.ts'
import type { DecodeOptions, Detection, InputSpec, OutputTensor } from './types.ts'

export const centernetInput: InputSpec = { size: 512, layout: 'nhwc', scale: 1 }
export const centernetDetectionsOutput = 'tower_0/detections'

export function decodeCenternet(detections: OutputTensor, options: DecodeOptions): Detection[] {
  const size = centernetInput.size
  const rows = detections.dims[1]!
  if (detections.dims.length !== 3 || detections.dims[2] !== 6) throw new Error(`centernet: detections must be [1, N, 6], got [${detections.dims.join(', ')}]`)
  const candidates: Detection[] = []
  const clamp = (v: number) => Math.min(Math.max(v / size, 0), 1)
  for (let r = 0; r < rows; r++) {
    const [x1, y1, x2, y2, score, classIndex] = Array.from({ length: 6 }, (_, k) => Number(detections.data[r * 6 + k]))
    const classId = Math.round(classIndex!)
    if (score! < options.minScore || (options.classes && !options.classes.includes(classId))) continue
    candidates.push({ classId, label: cocoLabels[classId] ?? `class ${classId}`, score: score!, box: { x1: clamp(x1!), y1: clamp(y1!), x2: clamp(x2!), y2: clamp(y2!) } })
  }
  return nonMaxSuppression(candidates, options.iouThreshold, options.maxDetections)
}
