/** Unit tests of the decoder kinds and input/head additions for the converted models (synthetic tensors). */
import * as ort from 'onnxruntime-node'
import { describe, expect, it } from 'vitest'
import { createDecoder } from '../../runtime/sidecar/pipeline/decoders/index.ts'
import { decodeFaceHead } from '../../runtime/sidecar/pipeline/heads/faceres.ts'
import { prepareInput, type PreparedInput } from '../../runtime/sidecar/pipeline/rgb-image.ts'

/** A 1000 × 500 image letterboxed into 512²: content 512 × 256 at the top-left. */
const letterboxed: PreparedInput = { data: new Float32Array(0), dims: [1, 512, 512, 3], contentWidth: 512, contentHeight: 256, scaleX: 1000 / 512, scaleY: 500 / 256 }

describe('centernet decoder', () => {
  const rows = (values: number[][]) => ({ 'tower_0/detections': new ort.Tensor('float32', Float32Array.from(values.flat()), [1, values.length, 6]) })
  const decoder = createDecoder({ kind: 'centernet', output: 'tower_0/detections', iouThreshold: 0.5, maxDetections: 10, classes: [0] })

  it('maps input pixels back to source pixels, keeps only the listed classes above the threshold', () => {
    const found = decoder(rows([
      [256, 0, 512, 128, 0.9, 0], // person, right half of the content, top half
      [0, 0, 100, 100, 0.8, 41], // cup: not a listed class
      [0, 0, 100, 100, 0.2, 0], // below the threshold
    ]), letterboxed, 0.25)
    expect(found).toHaveLength(1)
    expect(found[0]!.classIndex).toBe(0)
    expect(found[0]!.score).toBeCloseTo(0.9, 6)
    expect(found[0]!.box.x).toBeCloseTo(500, 3)
    expect(found[0]!.box.y).toBeCloseTo(0, 3)
    expect(found[0]!.box.width).toBeCloseTo(500, 3)
    expect(found[0]!.box.height).toBeCloseTo(250, 3)
  })

  it('suppresses an overlapping box of the same class and names a missing output', () => {
    const found = decoder(rows([[0, 0, 100, 100, 0.9, 0], [5, 5, 100, 100, 0.7, 0], [300, 100, 400, 200, 0.6, 0]]), letterboxed, 0.25)
    expect(found.map((d) => d.score.toFixed(1))).toEqual(['0.9', '0.6'])
    expect(() => decoder({}, letterboxed, 0.25)).toThrow(/tower_0\/detections is missing/)
  })
})

describe('mask-contours decoder', () => {
  it('one target per region: polygon and box in source pixels, score = mean probability inside', () => {
    const w = 64, h = 64
    const mask = new Float32Array(w * h)
    // Region A: x 8..23, y 8..39 (p 0.9); region B: x 40..55, y 40..55 (p 0.7); a 1-cell speck.
    for (let y = 8; y < 40; y++) for (let x = 8; x < 24; x++) mask[y * w + x] = 0.9
    for (let y = 40; y < 56; y++) for (let x = 40; x < 56; x++) mask[y * w + x] = 0.7
    mask[2 * w + 60] = 1
    const decoder = createDecoder({ kind: 'mask-contours', maskThreshold: 0.5, tolerance: 1, minArea: 0.002 })
    // A 640 × 320 image stretched to a 64² input: x × 10, y × 5.
    const input: PreparedInput = { data: new Float32Array(0), dims: [1, 64, 64, 3], contentWidth: 64, contentHeight: 64, scaleX: 10, scaleY: 5 }
    const found = decoder({ mask: new ort.Tensor('float32', mask, [1, h, w, 1]) }, input, 0.5)
    expect(found).toHaveLength(2)
    const [a, b] = found as [typeof found[0], typeof found[0]]
    expect(a.score).toBeCloseTo(0.9, 5)
    expect(b.score).toBeCloseTo(0.7, 5)
    // Contours run through cell centres ± half a cell (marching squares at 0.5).
    expect(a.box.x).toBeGreaterThan(70); expect(a.box.x).toBeLessThan(90)
    expect(a.box.x + a.box.width).toBeGreaterThan(230); expect(a.box.x + a.box.width).toBeLessThan(250)
    expect(a.box.y).toBeGreaterThan(35); expect(a.box.y).toBeLessThan(45)
    expect(a.box.y + a.box.height).toBeGreaterThan(195); expect(a.box.y + a.box.height).toBeLessThan(205)
    expect(a.polygon!.length).toBeGreaterThanOrEqual(4)
    expect(a.polygon!.length).toBeLessThan(12)
    // A region below the score threshold is no target.
    expect(decoder({ mask: new ort.Tensor('float32', mask, [1, h, w, 1]) }, input, 0.8)).toHaveLength(1)
  })
})

describe('gray input and the faceres head', () => {
  it('grayWeights: one channel of weighted normalized channels', async () => {
    const image = { data: Buffer.from([255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255]), width: 2, height: 2 }
    const prepared = await prepareInput(image, { resize: 'stretch', width: 2, height: 2, layout: 'NHWC', channelOrder: 'RGB', grayWeights: [0.2989, 0.587, 0.114], normalization: { mean: [127.5, 127.5, 127.5], std: [127.5, 127.5, 127.5] } })
    expect(prepared.dims).toEqual([1, 2, 2, 1])
    // (gray / 255 − 0.5) × 2 with gray = 0.2989 R + 0.587 G + 0.114 B (weights sum to 0.9999).
    const expected = [0.2989, 0.587, 0.114, 0.9999].map((g) => 2 * g - 0.9999)
    for (const [i, v] of expected.entries()) expect(prepared.data[i]).toBeCloseTo(v, 5)
  })

  it('gender and age labels, featurePreview = the first descriptor values', () => {
    const ages = new Float32Array(100)
    ages[30] = 0.5; ages[34] = 0.3; ages[60] = 0.2 // expected age 0.5·30 + 0.3·34 + 0.2·60 = 37.2
    const descriptor = Float32Array.from({ length: 1024 }, (_, i) => i / 1000)
    const out = decodeFaceHead({
      g: new ort.Tensor('float32', Float32Array.from([0.2]), [1, 1]),
      a: new ort.Tensor('float32', ages, [1, 100]),
      d: new ort.Tensor('float32', descriptor, [1, 1024]),
    }, { kind: 'faceres', genderOutput: 'g', ageOutput: 'a', descriptorOutput: 'd', previewLength: 3 })
    expect(out.labels[0]!.label).toBe('female')
    expect(out.labels[0]!.confidence).toBeCloseTo(0.8, 6)
    expect(out.labels[1]!.label).toBe('age:37')
    // Mass within 32..42: bins 34 only.
    expect(out.labels[1]!.confidence).toBeCloseTo(0.3, 6)
    expect(out.featurePreview.map((v) => v.toFixed(3))).toEqual(['0.000', '0.001', '0.002'])
    expect(() => decodeFaceHead({}, { kind: 'faceres', genderOutput: 'g', ageOutput: 'a', descriptorOutput: 'd', previewLength: 3 })).toThrow(/output g is missing/)
  })
})
