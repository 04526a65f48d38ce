/**
 * The converted COCO detector (CenterNet) through the device's own detector path (decode →
 * letterboxed input → centernet decoder with the shipped manifests' settings) on the
 * face-api demo photos with 3, 3, 3, 4, 5 and 4 people: the person detector finds at least
 * 20 of the 22 and reports at most 2 person boxes beyond the people present.
 */
import { join } from 'node:path'
import * as ort from 'onnxruntime-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveModelJson } from '../../models/convert/build-models.ts'
import { convertTfGraph } from '../../models/convert/convert.ts'
import { modelSources } from '../../models/convert/sources.ts'
import { loadTfGraph } from '../../models/convert/tfjs-graph.ts'
import { loadManifest } from '../../models/load-manifests.ts'
import type { DetectorNode } from '../../models/manifest-schema.ts'
import { decodeImage } from '../../runtime/sidecar/image/decode.ts'
import { createDecoder } from '../../runtime/sidecar/pipeline/decoders/index.ts'
import { prepareInput } from '../../runtime/sidecar/pipeline/rgb-image.ts'

const root = join(import.meta.dirname, '../..')
const peopleInSample = [3, 3, 3, 4, 5, 4]
const detectorOf = (algorithm: string) => loadManifest(join(root, `models/manifests/${algorithm}.json`), root).manifest.nodes[0] as DetectorNode
const objects = detectorOf('object-detection')
const persons = detectorOf('person-detector')
const limits = { maxEncodedImageBytes: 32 * 1024 * 1024, maxImagePixels: 64_000_000 }

interface Found { label: string; classIndex: number; score: number; box: { x1: number; y1: number; x2: number; y2: number } }

let session: ort.InferenceSession
beforeAll(async () => {
  const source = modelSources.find((s) => s.name === 'centernet')!
  const { onnx } = convertTfGraph(await loadTfGraph(resolveModelJson(source, root)), source.name)
  session = await ort.InferenceSession.create(onnx)
})
afterAll(async () => {
  await session?.release()
})

/** Detections of one sample, boxes normalized to the photo (0..1 corners). */
async function detect(sample: number, node: DetectorNode): Promise<Found[]> {
  const image = await decodeImage({ kind: 'path', path: join(root, `node_modules/@vladmandic/face-api/demo/sample${sample}.jpg`) }, limits)
  const input = await prepareInput(image, node.input)
  const outputs = await session.run({ [session.inputNames[0]!]: new ort.Tensor('float32', input.data, input.dims) })
  return createDecoder(node.decoder)(outputs, input, node.scoreThreshold).map((d) => ({
    label: node.labels[d.classIndex]!,
    classIndex: d.classIndex,
    score: d.score,
    box: { x1: d.box.x / image.width, y1: d.box.y / image.height, x2: (d.box.x + d.box.width) / image.width, y2: (d.box.y + d.box.height) / image.height },
  }))
}

describe('COCO detector on the sample photos', () => {
  it('finds at least 20 of the 22 people, with at most 2 extra person boxes', async () => {
    let found = 0
    let extra = 0
    for (const [i, people] of peopleInSample.entries()) {
      const boxes = await detect(i + 1, persons)
      expect(boxes.every((d) => d.label === 'person' && d.classIndex === 0)).toBe(true)
      found += Math.min(boxes.length, people)
      extra += Math.max(0, boxes.length - people)
    }
    expect(found).toBeGreaterThanOrEqual(20)
    expect(extra).toBeLessThanOrEqual(2)
  })

  it('gives boxes inside the image, above the score threshold, standing people taller than wide', async () => {
    const all = await detect(6, objects)
    expect(all.length).toBeGreaterThan(0)
    for (const d of all) {
      expect(d.score).toBeGreaterThanOrEqual(objects.scoreThreshold)
      expect(d.box.x1).toBeGreaterThanOrEqual(0)
      expect(d.box.y1).toBeGreaterThanOrEqual(0)
      expect(d.box.x2).toBeLessThanOrEqual(1)
      expect(d.box.y2).toBeLessThanOrEqual(1)
      expect(d.box.x2).toBeGreaterThan(d.box.x1)
      expect(d.box.y2).toBeGreaterThan(d.box.y1)
    }
    // sample6 (1920 × 1280) shows four people standing side by side
    const people = all.filter((d) => d.classIndex === 0)
    expect(people.length).toBeGreaterThanOrEqual(3)
    for (const p of people) expect((p.box.y2 - p.box.y1) * 1280).toBeGreaterThan((p.box.x2 - p.box.x1) * 1920)
  })
})
