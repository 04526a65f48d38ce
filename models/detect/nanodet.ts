/**
 * NanoDet (COCO, 416 × 416) output decoding. For each stride (8, 16, 32) the model gives
 * per-cell class scores (sigmoid applied, [1, cells, 80]) and a distance distribution
 * ([1, cells, 4 × 11]: left, top, right, bottom, each 11 bins of one stride unit, GFL
 * style); the distance is the expectation of the softmax over the bins.
 */
import { cocoLabels } from './coco-labels.ts'
import { nonMaxSuppression } from './nms.ts'
import type { DecodeOptions, Detection, InputSpec, OutputTensor } from './types.ts'

export const nanodetInput: InputSpec = { size: 416, layout: 'nchw', scale: 1 / 255 }
const STRIDES = [8, 16, 32]
const BINS = 11

/** Expected distance (in stride units) of one side's bin distribution. */
function expectedDistance(data: ArrayLike<number>, offset: number): number {
  let max = -Infinity
  for (let k = 0; k < BINS; k++) max = Math.max(max, data[offset + k]!)
  let sum = 0
  let weighted = 0
  for (let k = 0; k < BINS; k++) {
    const e = Math.exp(data[offset + k]! - max)
    sum += e
    weighted += e * k
  }
  return weighted / sum
}

export function decodeNanodet(outputs: readonly OutputTensor[], options: DecodeOptions): Detection[] {
  const size = nanodetInput.size
  const classCount = cocoLabels.length
  const candidates: Detection[] = []
  for (const stride of STRIDES) {
    const side = size / stride
    const cells = side * side
    const scores = outputs.find((o) => o.dims[1] === cells && o.dims[2] === classCount)
    const boxes = outputs.find((o) => o.dims[1] === cells && o.dims[2] === 4 * BINS)
    if (!scores || !boxes) throw new Error(`nanodet: outputs for stride ${stride} ([1, ${cells}, ${classCount}] and [1, ${cells}, ${4 * BINS}]) are missing`)
    for (let cell = 0; cell < cells; cell++) {
      const cx = ((cell % side) + 0.5) * stride
      const cy = (Math.floor(cell / side) + 0.5) * stride
      let box: Detection['box'] | undefined
      for (let classId = 0; classId < classCount; classId++) {
        const score = scores.data[cell * classCount + classId]!
        if (score < options.minScore || (options.classes && !options.classes.includes(classId))) continue
        if (!box) {
          const [l, t, r, b] = [0, 1, 2, 3].map((s) => expectedDistance(boxes.data, cell * 4 * BINS + s * BINS) * stride) as [number, number, number, number]
          const clamp = (v: number) => Math.min(Math.max(v / size, 0), 1)
          box = { x1: clamp(cx - l), y1: clamp(cy - t), x2: clamp(cx + r), y2: clamp(cy + b) }
        }
        candidates.push({ classId, label: cocoLabels[classId]!, score, box })
      }
    }
  }
  return nonMaxSuppression(candidates, options.iouThreshold, options.maxDetections)
}
