/**
 * Decoding at the model's size (docs/detection.md "Decoding at the model's size",
 * IMAGE_SHRINK_ON_LOAD): two real sidecars, one decoding every image in full first
 * (IMAGE_SHRINK_ON_LOAD=false) and one decoding JPEGs at the detector's input size. On photos
 * whose faces and persons were counted by eye — the six group photos (3, 3, 3, 4, 5, 4
 * people, every face visible) and the 35 portraits of ../shared/media/faces (one person, one
 * face each) — the faces and persons found match the full decode one to one: the same
 * count, IoU ≥ 0.9 per box, landmarks within 3 % of the face's width; face-analysis labels
 * change only where the full decode's confidence of that label was below 0.6.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compareResults, LABEL_CONFIDENCE, MAX_LANDMARK_SHIFT, MIN_IOU, targetsOf } from '../../bench/lib/shrink-accuracy.ts'
import type { DetectorNode, PipelineManifest } from '../../models/manifest-schema.ts'
import { jpegShrinkOnLoad } from '../../runtime/sidecar/image/decode.ts'
import { inputGeometry } from '../../runtime/sidecar/pipeline/rgb-image.ts'
import type { DetectOutcome } from '../../shared/inference/types.ts'
import { projectRoot, samplePath, samplePeople, startTestInference, type TestInference } from './helpers.ts'

const facesDir = path.resolve(projectRoot, '../shared/media/faces')
const portraits = existsSync(facesDir) ? readdirSync(facesDir).filter((f) => f.endsWith('.jpg')).sort() : []
const faceInput = ((JSON.parse(readFileSync(path.join(projectRoot, 'models/manifests/face-detection.json'), 'utf8')) as PipelineManifest).nodes[0] as DetectorNode).input
/** Each photo with the people (= faces) counted on it. */
const photos = [
  ...samplePeople.map((people, i) => ({ name: `sample${i + 1}.jpg`, path: samplePath(i + 1), people })),
  ...portraits.map((f) => ({ name: f, path: path.join(facesDir, f), people: 1 })),
]

describe('shrink-on-load keeps the faces and persons of the full decode', () => {
  let full: TestInference
  let shrunk: TestInference
  beforeAll(async () => {
    full = await startTestInference({ imageShrinkOnLoad: false })
    shrunk = await startTestInference({ imageShrinkOnLoad: true })
    for (const inf of [full, shrunk])
      for (const algorithm of ['face-detection', 'face-analysis', 'person-detector']) await inf.inference.load(algorithm, algorithm)
  }, 120_000)
  afterAll(async () => { await full?.close(); await shrunk?.close() })

  it('the portraits of ../shared/media/faces are there (35 photos)', () => {
    expect(portraits).toHaveLength(35)
  })

  const both = async (handle: string, photo: (typeof photos)[number], overlay = false) => {
    const a = await full.inference.detect({ handle, image: { kind: 'path', path: photo.path }, overlay })
    const b = await shrunk.inference.detect({ handle, image: { kind: 'path', path: photo.path }, overlay })
    return [a, b] as [DetectOutcome, DetectOutcome]
  }

  for (const algorithm of ['face-detection', 'face-analysis'] as const)
    it(`${algorithm}: every counted face, matched one to one (IoU ≥ ${MIN_IOU}, landmarks within ${MAX_LANDMARK_SHIFT * 100} %)`, async () => {
      let labelsChangedBelow = 0
      for (const photo of photos) {
        const [a, b] = await both(algorithm, photo)
        // The JPEG was decoded at BlazeFace's size by one sidecar (where libjpeg has a step
        // for it: at least 4× the 256 input on both axes) and in full by the other.
        const size = (await sharp(photo.path).metadata()).autoOrient
        const g = inputGeometry(size.width, size.height, faceInput)
        const step = jpegShrinkOnLoad(size.width, size.height, g.contentWidth, g.contentHeight)
        if (photo.name.startsWith('sample')) expect(step, photo.name).toBe(2)
        expect(Object.keys(b.timings), photo.name).toContain(step > 1 ? 'decodeScaled' : 'decode')
        expect(Object.keys(a.timings), photo.name).toContain('decode')
        expect(Object.keys(a.timings), photo.name).not.toContain('decodeScaled')
        expect(targetsOf(a.result), `${photo.name}: faces of the full decode`).toHaveLength(photo.people)
        const c = compareResults(a.result, b.result)
        expect(c.shrunk, `${photo.name}: faces`).toBe(photo.people)
        for (const [i, v] of c.ious.entries()) expect(v, `${photo.name} face ${i} IoU`).toBeGreaterThanOrEqual(MIN_IOU)
        expect(c.landmarkShift, `${photo.name}: landmark shift / face width`).toBeLessThanOrEqual(MAX_LANDMARK_SHIFT)
        expect(c.labelChanges, `${photo.name}: labels changed where the full decode was ≥ ${LABEL_CONFIDENCE} sure`).toEqual([])
        labelsChangedBelow += c.allowedLabelChanges
      }
      if (algorithm === 'face-detection') expect(labelsChangedBelow).toBe(0)
    }, 300_000)

  it('person-detector: the persons of the full decode, matched one to one (IoU ≥ 0.9), on the counted photos', async () => {
    let foundFull = 0, foundShrunk = 0
    for (const photo of photos) {
      const [a, b] = await both('person-detector', photo)
      // 1920-pixel photos are less than 4× the 512 input: decoded in full by both.
      if (photo.name.startsWith('sample')) expect(Object.keys(b.timings), photo.name).toContain('decode')
      const c = compareResults(a.result, b.result)
      expect(c.shrunk, `${photo.name}: persons`).toBe(c.full)
      for (const [i, v] of c.ious.entries()) expect(v, `${photo.name} person ${i} IoU`).toBeGreaterThanOrEqual(MIN_IOU)
      // Never more boxes than people.
      expect(c.full, photo.name).toBeLessThanOrEqual(photo.people)
      foundFull += c.full
      foundShrunk += c.shrunk
    }
    // 22 + 35 people counted; the full decode at 512 misses one on sample4.jpg (docs/detection.md "Detector input size").
    expect(foundFull).toBeGreaterThanOrEqual(56)
    expect(foundShrunk).toBe(foundFull)
  }, 300_000)

  it('with the overlay the full pixels are drawn: a picture of the photo\'s own size, the same targets', async () => {
    const photo = photos[0]!
    const [a, b] = await both('face-detection', photo, true)
    expect(compareResults(a.result, b.result).holds).toBe(true)
    const meta = await sharp(b.overlayJpeg!).metadata()
    expect([meta.width, meta.height]).toEqual([1920, 1280])
  }, 60_000)

  it('a PNG is decoded in full (no shrink-on-load), a truncated JPEG is ImageDecodeFailed on both', async () => {
    const png = await sharp(samplePath(1)).png({ compressionLevel: 1 }).toBuffer()
    const { timings } = await shrunk.inference.detect({ handle: 'face-detection', image: { kind: 'bytes', bytes: png }, overlay: false })
    expect(Object.keys(timings)).toContain('decode')
    expect(Object.keys(timings)).not.toContain('decodeScaled')
    const jpeg = await sharp(samplePath(1)).jpeg().toBuffer()
    const truncated = jpeg.subarray(0, Math.floor(jpeg.length / 2))
    for (const inf of [full, shrunk]) {
      const error = await inf.inference.detect({ handle: 'face-detection', image: { kind: 'bytes', bytes: truncated }, overlay: false }).then(() => null, (e: unknown) => e)
      expect(error, 'truncated JPEG').toMatchObject({ id: 'ImageDecodeFailed' })
    }
  }, 60_000)
})
