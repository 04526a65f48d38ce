/**
 * The converted COCO detector (CenterNet), decoded by models/detect, on the face-api demo
 * photos with 3, 3, 3, 4, 5 and 4 people: restricted to persons it finds at least 20 of
 * the 22 and reports at most 2 person boxes beyond the people present.
 */
import { join } from 'node:path'
import * as ort from 'onnxruntime-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveModelJson } from '../../models/convert/build-models.ts'
import { convertTfGraph } from '../../models/convert/convert.ts'
import { modelSources } from '../../models/convert/sources.ts'
import { loadTfGraph } from '../../models/convert/tfjs-graph.ts'
import { cocoDetectors, inputTensor, unletterbox, type Detection } from '../../models/detect/index.ts'
import { letterboxedRgb } from '../../models/detect/letterbox-image.ts'

const root = join(import.meta.dirname, '../..')
const peopleInSample = [3, 3, 3, 4, 5, 4]
const detector = cocoDetectors.centernet!

let session: ort.InferenceSession
beforeAll(async () => {
  const source = modelSources.find((s) => s.name === detector.model)!
  const { onnx } = convertTfGraph(await loadTfGraph(resolveModelJson(source, root)), source.name)
  session = await ort.InferenceSession.create(onnx)
})
afterAll(async () => {
  await session?.release()
})

async function detect(sample: number, classes?: number[]): Promise<Detection[]> {
  const { rgb, letterbox } = await letterboxedRgb(join(root, `node_modules/@vladmandic/face-api/demo/sample${sample}.jpg`), detector.input.size)
  const { data, dims } = inputTensor(rgb, detector.input)
  const outputs = await session.run({ [session.inputNames[0]!]: new ort.Tensor('float32', data, dims) })
  const decoded = detector.decode(
    Object.fromEntries(Object.entries(outputs).map(([name, t]) => [name, { dims: t.dims, data: t.data as Float32Array }])),
    { ...detector.defaults, classes },
  )
  return unletterbox(decoded, letterbox)
}

describe('COCO detector on the sample photos', () => {
  it('finds at least 20 of the 22 people, with at most 2 extra person boxes', async () => {
    let found = 0
    let extra = 0
    for (const [i, people] of peopleInSample.entries()) {
      const persons = await detect(i + 1, [0])
      expect(persons.every((d) => d.label === 'person' && d.classId === 0)).toBe(true)
      found += Math.min(persons.length, people)
      extra += Math.max(0, persons.length - people)
    }
    expect(found).toBeGreaterThanOrEqual(20)
    expect(extra).toBeLessThanOrEqual(2)
  })

  it('gives boxes inside the image, above the score threshold, standing people taller than wide', async () => {
    const all = await detect(6)
    expect(all.length).toBeGreaterThan(0)
    for (const d of all) {
      expect(d.score).toBeGreaterThanOrEqual(detector.defaults.minScore)
      expect(d.box.x1).toBeGreaterThanOrEqual(0)
      expect(d.box.y1).toBeGreaterThanOrEqual(0)
      expect(d.box.x2).toBeLessThanOrEqual(1)
      expect(d.box.y2).toBeLessThanOrEqual(1)
      expect(d.box.x2).toBeGreaterThan(d.box.x1)
      expect(d.box.y2).toBeGreaterThan(d.box.y1)
    }
    // sample6 (1920 × 1280) shows four people standing side by side
    const persons = all.filter((d) => d.classId === 0)
    expect(persons.length).toBeGreaterThanOrEqual(3)
    for (const p of persons) expect((p.box.y2 - p.box.y1) * 1280).toBeGreaterThan((p.box.x2 - p.box.x1) * 1920)
  })
})
