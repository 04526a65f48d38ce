import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InferenceEngine } from '../../runtime/sidecar/engine.ts'
import { FACE_BOX_ALGORITHMS, faceTargets, type RecordedTarget } from './fixtures/face-boxes.ts'
import { limits, projectRoot, samplePath } from './helpers.ts'

// Recorded by fixtures/record-face-boxes.ts with the pipeline as it was before the detection
// path was made faster (reduced decodes, overlay drawn into the pixels): the targets must stay.
// The full decode's (IMAGE_SHRINK_ON_LOAD=false); decoding at the model's size is held to the
// full decode by shrink-on-load.integration.test.ts.
const recorded = JSON.parse(readFileSync(path.join(import.meta.dirname, 'fixtures/face-boxes.json'), 'utf8')) as Record<string, Record<string, RecordedTarget[]>>

const within1px = (actual: RecordedTarget[], expected: RecordedTarget[], where: string) => {
  expect(actual.length, `${where}: number of faces`).toBe(expected.length)
  for (const [i, e] of expected.entries()) {
    const a = actual[i]!
    for (const k of ['x', 'y', 'width', 'height'] as const)
      expect(Math.abs(a.box[k] - e.box[k]), `${where} face ${i} box.${k}: ${a.box[k]} vs ${e.box[k]}`).toBeLessThanOrEqual(1)
    expect(a.landmark).toHaveLength(e.landmark.length)
    for (const [j, p] of e.landmark.entries()) {
      expect(Math.abs(a.landmark[j]!.xRatio - p.xRatio), `${where} face ${i} landmark ${j} x`).toBeLessThanOrEqual(1)
      expect(Math.abs(a.landmark[j]!.yRatio - p.yRatio), `${where} face ${i} landmark ${j} y`).toBeLessThanOrEqual(1)
    }
    expect(a.labels, `${where} face ${i} labels`).toEqual(e.labels)
  }
}

describe('face targets on the six sample photos stay as recorded (within 1 px)', () => {
  const engine = new InferenceEngine({ projectRoot, intraOpThreads: 1, limits, shrinkOnLoad: false })
  beforeAll(async () => { for (const algorithm of FACE_BOX_ALGORITHMS) await engine.load(algorithm, algorithm) })
  afterAll(async () => { await engine.close() })

  for (const algorithm of FACE_BOX_ALGORITHMS)
    for (const overlay of [true, false])
      it(`${algorithm}, overlay ${overlay ? 'drawn' : 'off'}`, async () => {
        for (let n = 1; n <= 6; n++) {
          const outcome = await engine.detect({ handle: algorithm, image: { kind: 'path', path: samplePath(n) }, overlay })
          within1px(faceTargets(outcome.result), recorded[algorithm]![`sample${n}.jpg`]!, `${algorithm} sample${n}.jpg`)
          expect(outcome.overlayJpeg === null).toBe(!overlay)
        }
      })
})
