/**
 * The converted face models on two faces of sample6.jpg (two smiling women; crops chosen by
 * eye): faceres says female with a plausible age, emotion says happy, and the descriptor of
 * a face is closer to a shifted crop of the same face than to the other face.
 */
import { join } from 'node:path'
import * as ort from 'onnxruntime-node'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveModelJson } from '../../models/convert/build-models.ts'
import { convertTfGraph } from '../../models/convert/convert.ts'
import { modelSources } from '../../models/convert/sources.ts'
import { loadTfGraph } from '../../models/convert/tfjs-graph.ts'
import { EMOTION_SIZE, FACERES_SIZE, decodeEmotion, decodeFaceres, descriptorSimilarity, emotionInput, faceresInput } from '../../models/face/attributes.ts'

const root = join(import.meta.dirname, '../..')
const photo = join(root, 'node_modules/@vladmandic/face-api/demo/sample6.jpg')
/** Face regions of sample6.jpg (1920 × 1537): the leftmost and the rightmost woman. */
const faces = {
  left: { left: 250, top: 470, width: 280, height: 310 },
  right: { left: 1460, top: 250, width: 270, height: 300 },
}
const shifted = (r: typeof faces.left, dx: number, dy: number) => ({ ...r, left: r.left + dx, top: r.top + dy })

const sessions: Record<string, ort.InferenceSession> = {}
beforeAll(async () => {
  for (const name of ['faceres', 'emotion']) {
    const source = modelSources.find((s) => s.name === name)!
    sessions[name] = await ort.InferenceSession.create(convertTfGraph(await loadTfGraph(resolveModelJson(source, root)), name).onnx)
  }
})
afterAll(async () => {
  await Promise.all(Object.values(sessions).map((s) => s.release()))
})

const crop = async (region: typeof faces.left, size: number) =>
  new Uint8Array(await sharp(photo).extract(region).resize(size, size, { fit: 'fill' }).removeAlpha().raw().toBuffer())

async function describeFace(region: typeof faces.left) {
  const { data, dims } = faceresInput(await crop(region, FACERES_SIZE))
  const out = await sessions.faceres!.run({ input_1: new ort.Tensor('float32', data, dims) })
  return decodeFaceres(Object.fromEntries(Object.entries(out).map(([k, t]) => [k, { data: t.data as Float32Array }])))
}

describe('face attributes on sample6.jpg', () => {
  it('faceres: both women female, adult ages, 1024-value descriptors', async () => {
    for (const region of Object.values(faces)) {
      const face = await describeFace(region)
      expect(face.gender).toBe('female')
      expect(face.genderScore).toBeGreaterThan(0.5)
      expect(face.age).toBeGreaterThan(15)
      expect(face.age).toBeLessThan(50)
      expect(face.descriptor).toHaveLength(1024)
    }
  })

  it('faceres descriptor: the same face shifted by 12 px is closer than the other face', async () => {
    const a = await describeFace(faces.left)
    const aShifted = await describeFace(shifted(faces.left, 12, 12))
    const b = await describeFace(faces.right)
    expect(descriptorSimilarity(a.descriptor, aShifted.descriptor)).toBeGreaterThan(descriptorSimilarity(a.descriptor, b.descriptor))
  })

  it('emotion: both smiling faces are happy', async () => {
    for (const region of Object.values(faces)) {
      const { data, dims } = emotionInput(await crop(region, EMOTION_SIZE))
      const scores = (await sessions.emotion!.run({ input_1: new ort.Tensor('float32', data, dims) })).Identity!.data as Float32Array
      const ranked = decodeEmotion(scores)
      expect(ranked[0]!.label).toBe('happy')
      expect(ranked.reduce((sum, e) => sum + e.score, 0)).toBeCloseTo(1, 4)
    }
  })

  it('rejects inputs of the wrong size', () => {
    expect(() => emotionInput(new Uint8Array(10))).toThrow(RangeError)
    expect(() => faceresInput(new Uint8Array(10))).toThrow(RangeError)
    expect(() => decodeEmotion([0.5, 0.5])).toThrow(RangeError)
  })
})
