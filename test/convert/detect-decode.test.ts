/** The pure parts of models/detect: NMS, letterbox mapping, input layout, CenterNet rows. */
import { describe, expect, it } from 'vitest'
import { decodeCenternet } from '../../models/detect/centernet.ts'
import { inputTensor, iou, letterboxGeometry, nonMaxSuppression, unletterbox, type Detection } from '../../models/detect/index.ts'

const det = (classId: number, score: number, x1: number, y1: number, x2: number, y2: number): Detection => ({ classId, label: `c${classId}`, score, box: { x1, y1, x2, y2 } })

describe('nms', () => {
  it('computes IoU of overlapping, nested and disjoint boxes', () => {
    expect(iou({ x1: 0, y1: 0, x2: 2, y2: 2 }, { x1: 1, y1: 0, x2: 3, y2: 2 })).toBeCloseTo(2 / 6)
    expect(iou({ x1: 0, y1: 0, x2: 4, y2: 4 }, { x1: 1, y1: 1, x2: 3, y2: 3 })).toBeCloseTo(4 / 16)
    expect(iou({ x1: 0, y1: 0, x2: 1, y2: 1 }, { x1: 2, y1: 2, x2: 3, y2: 3 })).toBe(0)
  })

  it('drops the lower-scoring overlapping box of the same class only', () => {
    const kept = nonMaxSuppression([det(0, 0.5, 0, 0, 1, 1), det(0, 0.9, 0, 0, 1, 0.9), det(1, 0.4, 0, 0, 1, 1), det(0, 0.3, 2, 2, 3, 3)], 0.5, 10)
    expect(kept.map((d) => [d.classId, d.score])).toEqual([[0, 0.9], [1, 0.4], [0, 0.3]])
  })

  it('stops at maxDetections', () => {
    expect(nonMaxSuppression([det(0, 0.9, 0, 0, 1, 1), det(0, 0.8, 2, 2, 3, 3)], 0.5, 1)).toHaveLength(1)
  })
})

describe('letterbox', () => {
  it('fits a landscape image to the square width and maps boxes back', () => {
    const lb = letterboxGeometry(1920, 1280, 512)
    expect(lb).toEqual({ width: 512, height: 341, size: 512 })
    const [back] = unletterbox([det(0, 1, 0.25, 0.1, 0.5, 341 / 512)], lb)
    expect(back!.box.x1).toBeCloseTo(0.25)
    expect(back!.box.y1).toBeCloseTo((0.1 * 512) / 341)
    expect(back!.box.y2).toBeCloseTo(1)
  })
})

describe('inputTensor', () => {
  const rgb = Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
  it('keeps interleaved pixels for NHWC', () => {
    expect(inputTensor(rgb, { size: 2, layout: 'nhwc', scale: 1 })).toEqual({ data: Float32Array.from(rgb), dims: [1, 2, 2, 3] })
  })
  it('splits channel planes for NCHW and scales', () => {
    const { data, dims } = inputTensor(rgb, { size: 2, layout: 'nchw', scale: 0.5 })
    expect(dims).toEqual([1, 3, 2, 2])
    expect(Array.from(data)).toEqual([1, 4, 7, 10, 2, 5, 8, 11, 3, 6, 9, 12].map((v) => v / 2))
  })
  it('rejects a buffer of the wrong size', () => {
    expect(() => inputTensor(rgb, { size: 3, layout: 'nhwc', scale: 1 })).toThrow(RangeError)
  })
})

describe('decodeCenternet', () => {
  it('reads x1,y1,x2,y2,score,class rows in input pixels, filters by score and class', () => {
    const rows = [
      [0, 0, 256, 512, 0.9, 0],
      [256, 0, 512, 256, 0.6, 41],
      [10, 10, 20, 20, 0.1, 0],
    ]
    const out = { dims: [1, 3, 6], data: Float32Array.from(rows.flat()) }
    const all = decodeCenternet(out, { minScore: 0.25, iouThreshold: 0.5, maxDetections: 10 })
    expect(all.map((d) => [d.label, d.box])).toEqual([
      ['person', { x1: 0, y1: 0, x2: 0.5, y2: 1 }],
      ['cup', { x1: 0.5, y1: 0, x2: 1, y2: 0.5 }],
    ])
    expect(decodeCenternet(out, { minScore: 0.25, iouThreshold: 0.5, maxDetections: 10, classes: [0] })).toHaveLength(1)
  })
})
