/**
 * Can a face gallery enrolled with FaceRes be re-described with the dlib ResNet from what it
 * stored (docs/galleries.md "Face descriptor candidates")? The device keeps, per face, a JPEG
 * of the FaceRes eye crop (3.2 × the eye distance, eye line at 0.4, at most 160 × 160,
 * quality 85: runtime/sidecar/engine.ts). For every labelled photo of shared/media/faces:
 *  - the stored picture is made as the device makes it, and BlazeFace (the `face-recognition`
 *    pipeline) is run on it again: is a face found, with its keypoints?
 *  - dlib's 150² chip (padding 0.25) fitted to those keypoints: does it lie inside the
 *    picture (how far its corners reach out, in eye distances)?
 *  - the chip's descriptor from the stored picture against the one from the photo itself
 *    (cosine), and the gallery protocol (first photo of each person enrolled, from the
 *    stored picture; every other photo matched from the photo): top-1 right, against the
 *    same protocol enrolled from the photos (the baseline, same run).
 * No timing: accuracy only (no lock needed).
 *
 *   node build.mjs && npx tsx bench/face-redescribe.bench.ts
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import * as ort from 'onnxruntime-node'
import sharp from 'sharp'
import { InferenceEngine } from '../runtime/sidecar/engine.ts'
import { alignByEyes, alignToTemplate, fitSimilarity } from '../runtime/sidecar/pipeline/crop.ts'
import type { Point } from '../runtime/sidecar/pipeline/geometry.ts'
import type { RgbImage } from '../runtime/sidecar/pipeline/rgb-image.ts'
import { readLabels } from './face-descriptors.bench.ts'

const root = path.resolve(import.meta.dirname, '..')
const facesDir = path.resolve(root, process.env.FACES_DIR ?? '../shared/media/faces')
const outFile = path.join(root, 'bench/out/face-redescribe.json')

/** dlib's mean face shape at BlazeFace's eyes, nose tip and mouth, on the unit face square (bench/face-descriptors.bench.ts). */
const TEMPLATE = [[0.22549, 0.21599], [0.75476, 0.21599], [0.490127, 0.515625], [0.490127, 0.80766]] as const
const PADDING = 0.25, SIZE = 150
const MEAN = [122.782, 117.001, 104.298]

const l2 = (v: Float32Array) => { let s = 0; for (const x of v) s += x * x; const n = Math.sqrt(s) || 1; return Float32Array.from(v, (x) => x / n) }
const dot = (a: Float32Array, b: Float32Array) => { let s = 0; for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!; return s }
const r4 = (v: number | undefined) => (v === undefined ? null : Math.round(v * 1e4) / 1e4)
const stats = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return { n: s.length, min: r4(s[0]), median: r4(s[Math.floor(s.length / 2)]), max: r4(s.at(-1)) } }

async function largestFace(engine: InferenceEngine, bytes: Buffer): Promise<Point[] | null> {
  const faces = await engine.describe({ algorithmId: 'face-recognition', image: { kind: 'bytes', bytes } })
  const face = faces.sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height)[0]
  return face && face.landmark.length >= 4 ? face.landmark.map((p) => ({ x: p.xRatio, y: p.yRatio })) : null
}

async function rgb(bytes: Buffer): Promise<RgbImage> {
  const { data, info } = await sharp(bytes).autoOrient().removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true })
  return { data, width: info.width, height: info.height }
}

/** How far dlib's chip reaches out of a `w` × `h` picture, in eye distances (0: inside). */
function chipOverhang(k: Point[], w: number, h: number): number {
  const to = TEMPLATE.map(([x, y]) => ({ x: ((PADDING + x) / (1 + 2 * PADDING)) * SIZE, y: ((PADDING + y) / (1 + 2 * PADDING)) * SIZE }))
  // chip → picture: the inverse of the fitted picture → chip transform.
  const t = fitSimilarity(k.slice(0, 4), to)
  const det = t.a * t.a + t.b * t.b
  const back = (x: number, y: number) => { const dx = x - t.tx, dy = y - t.ty; return { x: (t.a * dx + t.b * dy) / det, y: (-t.b * dx + t.a * dy) / det } }
  const eye = Math.hypot(k[0]!.x - k[1]!.x, k[0]!.y - k[1]!.y)
  let out = 0
  for (const c of [back(0, 0), back(SIZE, 0), back(SIZE, SIZE), back(0, SIZE)])
    out = Math.max(out, -c.x, -c.y, c.x - w, c.y - h)
  return Math.max(0, out) / eye
}

async function main() {
  const engine = new InferenceEngine({ projectRoot: root, intraOpThreads: 2, limits: { maxEncodedImageBytes: 32 << 20, maxImagePixels: 64_000_000 } })
  const session = await ort.InferenceSession.create(path.join(root, 'dist/models/face-recognition-resnet.onnx'), { intraOpNumThreads: 2, logSeverityLevel: 3 })
  const describe = async (image: RgbImage, k: Point[]) => {
    const chip = alignToTemplate(image, k.slice(0, 4), TEMPLATE, PADDING, SIZE, SIZE)
    const data = Float32Array.from(chip.data, (v, i) => (v - MEAN[i % 3]!) / 255)
    const out = await session.run({ [session.inputNames[0]!]: new ort.Tensor('float32', data, [1, SIZE, SIZE, 3]) })
    return l2(out[session.outputNames[0]!]!.data as Float32Array)
  }

  const rows: { file: string; identity: string; photo: Float32Array; stored: Float32Array | null; overhang: number | null }[] = []
  const noFaceInPhoto: string[] = [], noFaceInStored: string[] = []
  for (const { file, identity } of readLabels(facesDir)) {
    const bytes = readFileSync(path.join(facesDir, file))
    const image = await rgb(bytes)
    const k = await largestFace(engine, bytes)
    if (!k) { noFaceInPhoto.push(file); continue }
    // The stored picture, as the device makes it (runtime/sidecar/engine.ts, face-recognition.json align).
    const crop = alignByEyes(image, k[0]!, k[1]!, 3.2, 0.4)
    const stored = await sharp(crop.data, { raw: { width: crop.width, height: crop.height, channels: 3 } }).resize(160, 160, { fit: 'inside' }).jpeg({ quality: 85 }).toBuffer()
    const storedImage = await rgb(stored)
    const ks = await largestFace(engine, stored)
    if (!ks) noFaceInStored.push(file)
    rows.push({ file, identity, photo: await describe(image, k), stored: ks ? await describe(storedImage, ks) : null, overhang: ks ? chipOverhang(ks, storedImage.width, storedImage.height) : null })
  }

  // Gallery protocol: first photo of each person enrolled; probes described from their photos.
  const protocol = (enrol: (r: typeof rows[number]) => Float32Array | null) => {
    const enrolled = new Map<string, Float32Array>()
    const enrolledFiles = new Set<string>()
    for (const r of rows) if (r.identity && !enrolled.has(r.identity)) { const d = enrol(r); if (d) { enrolled.set(r.identity, d); enrolledFiles.add(r.file) } }
    let probes = 0, top1 = 0
    const right: number[] = [], strangers: number[] = []
    for (const r of rows) {
      if (enrolledFiles.has(r.file)) continue
      const ranked = [...enrolled].map(([id, d]) => ({ id, s: dot(r.photo, d) })).sort((a, b) => b.s - a.s)
      if (!r.identity) { strangers.push(ranked[0]!.s); continue }
      probes++
      if (ranked[0]!.id === r.identity) top1++
      const own = ranked.find((x) => x.id === r.identity)
      if (own) right.push(own.s)
    }
    return { enrolled: enrolled.size, probes, top1, rightSimilarity: stats(right), strangerBest: stats(strangers) }
  }

  const withStored = rows.filter((r) => r.stored)
  const report = {
    photos: rows.length + noFaceInPhoto.length,
    noFaceInPhoto,
    noFaceInStoredPicture: noFaceInStored,
    chipOverhangEyeDistances: stats(withStored.map((r) => r.overhang!)),
    chipInsideStoredPicture: withStored.filter((r) => r.overhang === 0).length,
    storedVsPhotoCosine: stats(withStored.map((r) => dot(r.photo, r.stored!))),
    enrolledFromPhotos: protocol((r) => r.photo),
    enrolledFromStoredPictures: protocol((r) => r.stored),
    perPhoto: rows.map((r) => ({ file: r.file, identity: r.identity, overhang: r.overhang === null ? null : r4(r.overhang), storedVsPhoto: r.stored ? r4(dot(r.photo, r.stored)) : null })),
  }
  mkdirSync(path.dirname(outFile), { recursive: true })
  writeFileSync(outFile, JSON.stringify(report, null, 2))
  const { perPhoto: _, ...summary } = report
  console.log(JSON.stringify(summary, null, 2))
  await session.release()
  await engine.close()
}

await main()
