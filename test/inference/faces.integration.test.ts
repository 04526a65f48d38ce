import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Target } from '../../shared/inference/types.ts'
import { samplePath, samplePeople, startTestInference, type TestInference } from './helpers.ts'

const inside = (t: Target) => t.landmark.every((p) =>
  p.xRatio >= t.box.x && p.xRatio <= t.box.x + t.box.width && p.yRatio >= t.box.y && p.yRatio <= t.box.y + t.box.height)

describe('face detection (BlazeFace) on group photos through the sidecar', () => {
  let inf: TestInference
  beforeAll(async () => {
    inf = await startTestInference()
    await inf.inference.load('faces', 'face-detection')
  })
  afterAll(async () => { await inf?.close() })

  it('finds the faces of the six samples: at most one miss overall, never more boxes than people', async () => {
    let misses = 0
    for (const [i, people] of samplePeople.entries()) {
      const { result, overlayJpeg } = await inf.inference.detect({ handle: 'faces', image: { kind: 'path', path: samplePath(i + 1) } })
      // spec 2.6: targets live in areaList[].targetList[], no top-level targetList.
      expect(result).not.toHaveProperty('targetList')
      expect(result.algorithmCode).toBe('face-detection')
      expect(result.timestamp).toMatch(/^\d{13}$/)
      expect(result.areaList).toHaveLength(1)
      expect(result.areaList[0]).toMatchObject({ areaId: '0', bDetected: false })
      const faces = result.areaList.flatMap((a) => a.targetList)
      expect(faces.length, `sample${i + 1}.jpg`).toBeLessThanOrEqual(people)
      misses += people - faces.length
      for (const face of faces) {
        expect(face.confidence[0]!.label).toBe('face')
        expect(face.confidence[0]!.confidence).toBeGreaterThan(0.4)
        expect(face).not.toHaveProperty('bLogicResult')
        expect(face.landmark).toHaveLength(6)
        expect(inside(face), `landmarks inside box on sample${i + 1}`).toBe(true)
        // An upright face: both eyes above the mouth.
        const [rightEye, leftEye, , mouth] = face.landmark as [Target['landmark'][0], Target['landmark'][0], unknown, Target['landmark'][0]]
        expect(mouth.yRatio).toBeGreaterThan(Math.max(rightEye.yRatio, leftEye.yRatio))
        expect(face.maskPolygon).toEqual([])
      }
      expect(overlayJpeg!.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]))
    }
    expect(misses).toBeLessThanOrEqual(1)
  })

  it('boxes of one photo do not overlap (one box per face)', async () => {
    const { result } = await inf.inference.detect({ handle: 'faces', image: { kind: 'path', path: samplePath(5) }, overlay: false })
    const boxes = result.areaList[0]!.targetList.map((t) => t.box)
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i]!, b = boxes[j]!
        const overlapX = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x)
        const overlapY = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y)
        expect(overlapX <= 0 || overlapY <= 0).toBe(true)
      }
  })
})
