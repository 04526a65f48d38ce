/** The sidecar pipeline's pure detection parts: IoU, NMS, letterbox mapping, input layout, CenterNet rows. */
import path from 'node:path'
import * as ort from 'onnxruntime-node'
import { describe, expect, it } from 'vitest'
import type { DetectorNode, InputSpec } from '../../models/manifest-schema.ts'
import { loadManifest } from '../../models/load-manifests.ts'
import { InferenceEngine } from '../../runtime/sidecar/engine.ts'
import { createDecoder } from '../../runtime/sidecar/pipeline/decoders/index.ts'
import type { Detection } from '../../runtime/sidecar/pipeline/detection.ts'
import { iou, type Box } from '../../runtime/sidecar/pipeline/geometry.ts'
import { nonMaxSuppression } from '../../runtime/sidecar/pipeline/nms.ts'
import { prepareInput, type PreparedInput } from '../../runtime/sidecar/pipeline/rgb-image.ts'
import { limits, projectRoot } from './helpers.ts'

const corners = (x1: number, y1: number, x2: number, y2: number): Box => ({ x: x1, y: y1, width: x2 - x1, height: y2 - y1 })
const det = (classIndex: number, score: number, x1: number, y1: number, x2: number, y2: number): Detection => ({ classIndex, score, box: corners(x1, y1, x2, y2) })
const hard = (iouThreshold: number, maxDetections: number) => ({ method: 'hard', iouThreshold, maxDetections }) as const
const objectDetector = loadManifest(path.join(projectRoot, 'models/manifests/object-detection.json'), projectRoot).manifest.nodes[0] as DetectorNode

describe('nms', () => {
  it('computes IoU of overlapping, nested and disjoint boxes', () => {
    expect(iou(corners(0, 0, 2, 2), corners(1, 0, 3, 2))).toBeCloseTo(2 / 6)
    expect(iou(corners(0, 0, 4, 4), corners(1, 1, 3, 3))).toBeCloseTo(4 / 16)
    expect(iou(corners(0, 0, 1, 1), corners(2, 2, 3, 3))).toBe(0)
  })

  it('drops the lower-scoring overlapping box of the same class only', () => {
    const kept = nonMaxSuppression([det(0, 0.5, 0, 0, 1, 1), det(0, 0.9, 0, 0, 1, 0.9), det(1, 0.4, 0, 0, 1, 1), det(0, 0.3, 2, 2, 3, 3)], hard(0.5, 10))
    expect(kept.map((d) => [d.classIndex, d.score])).toEqual([[0, 0.9], [1, 0.4], [0, 0.3]])
  })

  it('stops at maxDetections', () => {
    expect(nonMaxSuppression([det(0, 0.9, 0, 0, 1, 1), det(0, 0.8, 2, 2, 3, 3)], hard(0.5, 1))).toHaveLength(1)
  })

  it('keeps equal scores in input order, suppresses only above the threshold, and never repeats a box', () => {
    // IoU of these two is exactly 0.5: kept at threshold 0.5, suppressed below it
    const pair = [det(0, 0.7, 0, 0, 3, 1), det(0, 0.7, 1, 0, 4, 1)]
    expect(iou(pair[0]!.box, pair[1]!.box)).toBe(0.5)
    expect(nonMaxSuppression(pair, hard(0.5, 10))).toEqual(pair)
    expect(nonMaxSuppression(pair, hard(0.49, 10))).toEqual([pair[0]])
    expect(nonMaxSuppression([...pair].reverse(), hard(0.49, 10))).toEqual([pair[1]])
    // threshold 1: nothing overlaps more, so every box stays, once
    const same = [det(0, 0.9, 0, 0, 1, 1), det(0, 0.8, 0, 0, 1, 1)]
    expect(nonMaxSuppression(same, hard(1, 10))).toEqual(same)
  })
})

describe('letterbox', () => {
  it('fits a landscape image to the square width and maps boxes back', async () => {
    const image = { data: Buffer.alloc(1920 * 1280 * 3), width: 1920, height: 1280 }
    const prepared = await prepareInput(image, objectDetector.input)
    expect(prepared).toMatchObject({ dims: [1, 512, 512, 3], contentWidth: 512, contentHeight: 341 })
    // a box normalized to the square input, as CenterNet rows are in its pixels
    const rows = { 'tower_0/detections': new ort.Tensor('float32', Float32Array.from([0.25 * 512, 0.1 * 512, 0.5 * 512, 341, 1, 0]), [1, 1, 6]) }
    const [back] = createDecoder(objectDetector.decoder)(rows, prepared, 0.25)
    expect(back!.box.x / 1920).toBeCloseTo(0.25)
    expect(back!.box.y / 1280).toBeCloseTo((0.1 * 512) / 341)
    expect((back!.box.y + back!.box.height) / 1280).toBeCloseTo(1)
  })
})

describe('input tensor', () => {
  const image = { data: Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]), width: 2, height: 2 }
  const spec = (layout: 'NHWC' | 'NCHW', scale: number): InputSpec =>
    ({ resize: 'stretch', width: 2, height: 2, layout, channelOrder: 'RGB', normalization: { mean: [0, 0, 0], std: [1 / scale, 1 / scale, 1 / scale] } })
  it('keeps interleaved pixels for NHWC', async () => {
    expect(await prepareInput(image, spec('NHWC', 1))).toMatchObject({ data: Float32Array.from(image.data), dims: [1, 2, 2, 3] })
  })
  it('splits channel planes for NCHW and scales', async () => {
    const { data, dims } = await prepareInput(image, spec('NCHW', 0.5))
    expect(dims).toEqual([1, 3, 2, 2])
    expect(Array.from(data)).toEqual([1, 4, 7, 10, 2, 5, 8, 11, 3, 6, 9, 12].map((v) => v / 2))
  })
  it('rejects a raw frame of the wrong size', async () => {
    const engine = new InferenceEngine({ projectRoot, manifestDir: false, intraOpThreads: 1, limits })
    await expect(engine.decode({ kind: 'rgb', width: 3, height: 3, data: image.data }, 'image')).rejects.toMatchObject({ errorId: 'ImageDecodeFailed' })
  })
})

describe('centernet rows', () => {
  it('reads x1,y1,x2,y2,score,class rows in input pixels, filters by score and class', () => {
    const rows = [
      [0, 0, 256, 512, 0.9, 0],
      [256, 0, 512, 256, 0.6, 41],
      [10, 10, 20, 20, 0.1, 0],
    ]
    const out = { 'tower_0/detections': new ort.Tensor('float32', Float32Array.from(rows.flat()), [1, 3, 6]) }
    // the square input itself (scale 1): boxes stay in its pixels
    const square: PreparedInput = { data: new Float32Array(0), dims: [1, 512, 512, 3], contentWidth: 512, contentHeight: 512, scaleX: 1, scaleY: 1 }
    const decoder = { kind: 'centernet', output: 'tower_0/detections', iouThreshold: 0.5, maxDetections: 10 } as const
    const all = createDecoder(decoder)(out, square, 0.25)
    expect(all.map((d) => [objectDetector.labels[d.classIndex], d.box])).toEqual([
      ['person', corners(0, 0, 256, 512)],
      ['cup', corners(256, 0, 512, 256)],
    ])
    expect(createDecoder({ ...decoder, classes: [0] })(out, square, 0.25)).toHaveLength(1)
  })
})
