/**
 * A recognizer node of the dlib ResNet (the build's `face-recognition-resnet`) on dlib's face
 * chip (`align` kind `template`, sampled from the box-filtered photo; raw descriptors compared by
 * Euclidean distance, docs/galleries.md "Measure"), run by the
 * sidecar's engine on the labelled photos of shared/media/faces: the manifest's input
 * normalization is face-api's, and one photo enrolled per person ranks that person first for
 * each of their other photos.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import * as ort from 'onnxruntime-node'
import sharp from 'sharp'
import { afterAll, describe, expect, it } from 'vitest'
import { defaultManifestDir } from '../../models/load-manifests.ts'
import { InferenceEngine } from '../../runtime/sidecar/engine.ts'
import { alignToTemplate } from '../../runtime/sidecar/pipeline/crop.ts'
import { limits } from '../inference/helpers.ts'

const projectRoot = path.resolve(import.meta.dirname, '../..')
const facesDir = path.resolve(projectRoot, '../shared/media/faces')
/** dlib's mean face shape at BlazeFace's eyes, nose tip and mouth, on the unit face square. */
const TEMPLATE: [number, number][] = [[0.22549, 0.21599], [0.75476, 0.21599], [0.490127, 0.515625], [0.490127, 0.80766]]
/** face-api's FaceRecognitionNet input: RGB minus this mean, / 255. */
const MEAN = [122.782, 117.001, 104.298]

const manifestDir = mkdtempSync(path.join(tmpdir(), 'dlib-chip-'))
afterAll(() => rmSync(manifestDir, { recursive: true, force: true }))

function writeManifest() {
  const m = JSON.parse(readFileSync(path.join(defaultManifestDir(projectRoot), 'face-recognition.json'), 'utf8'))
  m.models = { 'blazeface-back': m.models['blazeface-back'], resnet: { source: { build: 'face-recognition-resnet' }, format: 'onnx' } }
  Object.assign(m.nodes[1], {
    model: 'resnet',
    input: { resize: 'stretch', width: 150, height: 150, layout: 'NHWC', channelOrder: 'RGB', normalization: { mean: MEAN, std: [255, 255, 255] } },
    align: { kind: 'template', keypoints: [0, 1, 2, 3], template: TEMPLATE, padding: 0.25, filter: 'box' },
    // Raw descriptors, compared by Euclidean distance (docs/galleries.md "Measure").
    normalize: false,
    descriptorOutput: 'descriptor',
  })
  writeFileSync(path.join(manifestDir, 'face-recognition.json'), JSON.stringify(m))
}

const labels = readFileSync(path.join(facesDir, 'labels.csv'), 'utf8').trim().split('\n').slice(1).map((l) => {
  const [file, identity] = l.split(',')
  return { file: file!.trim(), identity: (identity ?? '').trim() }
})

describe('recognizer on dlib\'s face chip (dlib ResNet-29)', () => {
  writeManifest()
  const engine = new InferenceEngine({ projectRoot, manifestDir, intraOpThreads: 1, limits })
  afterAll(async () => { await engine.close() })

  const largest = async (bytes: Buffer) => {
    const faces = await engine.describe({ algorithmId: 'face-recognition', image: { kind: 'bytes', bytes }, pictures: true })
    return faces.sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height)[0]
  }

  it('describes the chip with face-api\'s normalization: the same descriptor as the network run by hand on the warped photo', async () => {
    const bytes = readFileSync(path.join(facesDir, labels[0]!.file))
    const face = (await largest(bytes))!
    expect(face.descriptor).toHaveLength(128)
    const picture = await sharp(face.picture!).metadata()
    // The stored picture is the square chip, drawn at 160 × 160 (runtime/sidecar/engine.ts, the console's picture).
    expect([picture.width, picture.height]).toEqual([160, 160])

    const { data, info } = await sharp(bytes).autoOrient().removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true })
    const chip = alignToTemplate({ data, width: info.width, height: info.height }, face.landmark.slice(0, 4).map((p) => ({ x: p.xRatio, y: p.yRatio })), TEMPLATE, 0.25, 150, 150, 'box')
    const session = await ort.InferenceSession.create(path.join(projectRoot, 'dist/models/face-recognition-resnet.onnx'))
    const out = await session.run({ input: new ort.Tensor('float32', Float32Array.from(chip.data, (v, i) => (v - MEAN[i % 3]!) / 255), [1, 150, 150, 3]) })
    await session.release()
    const raw = out.descriptor!.data as Float32Array
    // The raw output itself (not normalized): the same values, to within what the engine's session
    // options change (0.01 in distance is a similarity of 0.99998, docs/galleries.md "Measure").
    expect(Math.hypot(...raw.map((v, i) => v - face.descriptor[i]!))).toBeLessThan(0.01)
    expect(Math.abs(Math.hypot(...face.descriptor) - Math.hypot(...raw))).toBeLessThan(0.01)
    expect(Math.abs(Math.hypot(...face.descriptor) - 1)).toBeGreaterThan(0.1)
  }, 120_000)

  it('one photo enrolled per person: each of their other photos ranks them first', async () => {
    const enrolled = new Map<string, Float32Array>()
    const probes: { file: string; identity: string; descriptor: Float32Array }[] = []
    for (const { file, identity } of labels) {
      if (!identity) continue
      const face = await largest(readFileSync(path.join(facesDir, file)))
      expect(face, `${file}: a face`).toBeDefined()
      if (!enrolled.has(identity)) enrolled.set(identity, face!.descriptor)
      else probes.push({ file, identity, descriptor: face!.descriptor })
    }
    // Counted from labels.csv: every labelled photo but the first of each person.
    const people = new Set(labels.filter((l) => l.identity).map((l) => l.identity))
    expect(probes).toHaveLength(labels.filter((l) => l.identity).length - people.size)
    const distance = (a: Float32Array, b: Float32Array) => Math.hypot(...a.map((v, i) => v - b[i]!))
    const named = probes.map((p) => ({ file: p.file, identity: p.identity, first: [...enrolled].sort((x, y) => distance(p.descriptor, x[1]) - distance(p.descriptor, y[1]))[0]![0] }))
    expect(named.filter((n) => n.first !== n.identity)).toEqual([])
  }, 300_000)
})
