/**
 * Alignments of the dlib ResNet-29 face descriptor (docs/galleries.md "Alignment and measure
 * measured"), on the labelled photos of shared/media/faces, against the shipped one (BlazeFace's
 * eyes, nose tip and mouth fitted onto dlib's mean face, padding 0.25) in the same run:
 *  - dlib's 68-point chip (get_face_chip_details with a 68-point shape: the nose, the eyes and
 *    the upper lip, 33 points, fitted onto dlib's mean face shape) on the points of face-api's
 *    68-point landmark net (models/convert/faceapi-landmarks.ts), its 112 × 112 input cut as
 *    an upright square about BlazeFace's box (× 1.4) or as BlazeFace's own chip (padding 0.2);
 *    dlib's 5-point chip (eye corners 36, 39, 42, 45 and the nose 33, dlib's 5-point mean shape)
 *    on the same points;
 *  - the shipped chip averaged with its mirror image;
 *  - the shipped chip drawn from a box-filtered copy of the photo when the chip is ≥ 3× smaller
 *    (dlib's extract_image_chip downsamples before sampling; `warpSimilarity` samples bilinearly).
 * Each with the cosine of L2-normalized descriptors (the device's measure) and with 1 − the
 * Euclidean distance of the raw descriptors (dlib's own, threshold 0.6 on the distance). The
 * gallery protocol: the first photo of each person enrolled, the others and the strangers
 * matched; the gap = weakest right − strongest impostor (a wrong person or a stranger's best);
 * how many right names lie above every impostor; time per face (p50: alignment, landmarks
 * when used, descriptor; JS run by tsx, slower than the bundled device).
 *
 *   node build.mjs && flock /work/bench.lock npx tsx bench/face-alignment.bench.ts
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import * as ort from 'onnxruntime-node'
import sharp from 'sharp'
import { buildModels } from '../models/convert/build-models.ts'
import { FACEAPI_LANDMARKS_SIZE, writeFaceApiLandmarksGraph } from '../models/convert/faceapi-landmarks.ts'
import { InferenceEngine } from '../runtime/sidecar/engine.ts'
import { fitSimilarity, warpSimilarity, type Similarity } from '../runtime/sidecar/pipeline/crop.ts'
import type { Box, Point } from '../runtime/sidecar/pipeline/geometry.ts'
import type { RgbImage } from '../runtime/sidecar/pipeline/rgb-image.ts'
import { readLabels } from './face-descriptors.bench.ts'

const root = path.resolve(import.meta.dirname, '..')
const facesDir = path.resolve(root, process.env.FACES_DIR ?? '../shared/media/faces')
const outDir = path.join(root, 'bench/out')
const CHIP = 150
const LM = FACEAPI_LANDMARKS_SIZE
/** face-api's normalization of both networks' input: RGB minus this mean, / 255. */
const MEAN = [122.782, 117.001, 104.298]

/** dlib's mean face shape, points 17–67 on the unit face square (dlib/image_transforms/interpolation.h get_face_chip_details). */
const MEAN_X = [0.000213256, 0.0752622, 0.18113, 0.29077, 0.393397, 0.586856, 0.689483, 0.799124, 0.904991, 0.98004, 0.490127, 0.490127, 0.490127, 0.490127, 0.36688, 0.426036, 0.490127, 0.554217, 0.613373, 0.121737, 0.187122, 0.265825, 0.334606, 0.260918, 0.182743, 0.645647, 0.714428, 0.793132, 0.858516, 0.79751, 0.719335, 0.254149, 0.340985, 0.428858, 0.490127, 0.551395, 0.639268, 0.726104, 0.642159, 0.556721, 0.490127, 0.423532, 0.338094, 0.290379, 0.428096, 0.490127, 0.552157, 0.689874, 0.553364, 0.490127, 0.42689]
const MEAN_Y = [0.106454, 0.038915, 0.0187482, 0.0344891, 0.0773906, 0.0773906, 0.0344891, 0.0187482, 0.038915, 0.106454, 0.203352, 0.307009, 0.409805, 0.515625, 0.587326, 0.609345, 0.628106, 0.609345, 0.587326, 0.216423, 0.178758, 0.179852, 0.231733, 0.245099, 0.244077, 0.231733, 0.179852, 0.178758, 0.216423, 0.244077, 0.245099, 0.780233, 0.745405, 0.727388, 0.742578, 0.727388, 0.745405, 0.780233, 0.864805, 0.902192, 0.909281, 0.902192, 0.864805, 0.784792, 0.778746, 0.785343, 0.778746, 0.784792, 0.824182, 0.831803, 0.824182]
/** The points dlib fits: 17–67 without the brows (17–26) and the lower lip (55–59, 65–67). */
const DLIB68_USED = Array.from({ length: 51 }, (_, k) => k + 17).filter((i) => !(i <= 26 || (i >= 55 && i <= 59) || i >= 65))
/** dlib's 5-point mean shape (get_face_chip_details, 5 parts): outer and inner eye corners of each eye, the nose below. */
const DLIB5 = [[0.8595674595992, 0.2134981538014], [0.6460604764104, 0.2289674387677], [0.1205750620789, 0.2137274526848], [0.3340850613712, 0.2290642403242], [0.4901123135169, 0.6277975316291]] as const
const DLIB5_FROM_68 = [45, 42, 36, 39, 33]
/** The shipped template (models/manifests/face-recognition.json): BlazeFace's eyes, nose tip, mouth. */
const SHIPPED = [[0.22549, 0.21599], [0.75476, 0.21599], [0.490127, 0.515625], [0.490127, 0.80766]] as const

const onChip = (x: number, y: number, padding: number, side: number) => ({ x: ((padding + x) / (1 + 2 * padding)) * side, y: ((padding + y) / (1 + 2 * padding)) * side })
const shippedChip = (k: Point[], padding = 0.25, side = CHIP) => fitSimilarity(k.slice(0, 4), SHIPPED.map(([x, y]) => onChip(x, y, padding, side)))
const chip68 = (l: Point[]) => fitSimilarity(DLIB68_USED.map((i) => l[i]!), DLIB68_USED.map((i) => onChip(MEAN_X[i - 17]!, MEAN_Y[i - 17]!, 0.25, CHIP)))
const chip5 = (l: Point[]) => fitSimilarity(DLIB5_FROM_68.map((i) => l[i]!), DLIB5.map(([x, y]) => onChip(x, y, 0.25, CHIP)))
const uprightSquare = (box: Box, scale: number): Similarity => {
  const side = Math.max(box.width, box.height) * scale, a = LM / side
  return { a, b: 0, tx: -(box.x + box.width / 2 - side / 2) * a, ty: -(box.y + box.height / 2 - side / 2) * a }
}
const invert = (s: Similarity): Similarity => { const d = s.a * s.a + s.b * s.b, a = s.a / d, b = -s.b / d; return { a, b, tx: -(a * s.tx - b * s.ty), ty: -(b * s.tx + a * s.ty) } }
const apply = (s: Similarity, p: Point) => ({ x: s.a * p.x - s.b * p.y + s.tx, y: s.b * p.x + s.a * p.y + s.ty })

/** The photo box-averaged by `f` × `f` (integer), cached per photo. */
const shrunk = new WeakMap<RgbImage, Map<number, RgbImage>>()
function shrink(image: RgbImage, f: number): RgbImage {
  let byFactor = shrunk.get(image)
  if (!byFactor) shrunk.set(image, byFactor = new Map())
  const cached = byFactor.get(f)
  if (cached) return cached
  const width = Math.floor(image.width / f), height = Math.floor(image.height / f), out = Buffer.alloc(width * height * 3)
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      for (let c = 0; c < 3; c++) {
        let s = 0
        for (let dy = 0; dy < f; dy++) for (let dx = 0; dx < f; dx++) s += image.data[(((y * f + dy) * image.width) + x * f + dx) * 3 + c]!
        out[(y * width + x) * 3 + c] = Math.round(s / (f * f))
      }
  const small = { data: out, width, height }
  byFactor.set(f, small)
  return small
}
/** `warpSimilarity`, from a copy box-filtered by ⌊shrink / 1.5⌋ when that is ≥ 2. */
function warpFiltered(image: RgbImage, t: Similarity, side: number): RgbImage {
  const f = Math.floor(1 / Math.hypot(t.a, t.b) / 1.5)
  return f < 2 ? warpSimilarity(image, t, side, side) : warpSimilarity(shrink(image, f), { ...t, a: t.a * f, b: t.b * f }, side, side)
}

function tensorOf(image: RgbImage, side: number, mirror = false): ort.Tensor {
  const data = new Float32Array(side * side * 3)
  for (let y = 0; y < side; y++)
    for (let x = 0; x < side; x++)
      for (let c = 0; c < 3; c++) data[(y * side + x) * 3 + c] = (image.data[(y * side + (mirror ? side - 1 - x : x)) * 3 + c]! - MEAN[c]!) / 255
  return new ort.Tensor('float32', data, [1, side, side, 3])
}

const r4 = (v: number | undefined) => (v === undefined ? null : Math.round(v * 1e4) / 1e4)
const stats = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return { n: s.length, min: r4(s[0]), median: r4(s[Math.floor(s.length / 2)]), max: r4(s.at(-1)) } }
const unit = (v: Float32Array) => { const n = Math.hypot(...v) || 1; return Float32Array.from(v, (x) => x / n) }
const cosine = (a: Float32Array, b: Float32Array) => { const x = unit(a), y = unit(b); let s = 0; for (let i = 0; i < x.length; i++) s += x[i]! * y[i]!; return s }
const oneMinusDistance = (a: Float32Array, b: Float32Array) => { let s = 0; for (let i = 0; i < a.length; i++) s += (a[i]! - b[i]!) ** 2; return 1 - Math.sqrt(s) }

interface Photo { file: string; identity: string; image: RgbImage; keypoints: Point[]; box: Box }

/**
 * The shipped alignment and measure (cosine) with the first `k` photos of each person enrolled
 * (a person with fewer keeps one to recognise): each probe's similarity to a person is its best
 * over that person's pictures, as the device's search keeps each person's best picture
 * (runtime/galleries/search.ts).
 */
function severalEnrolled(photos: Photo[], descriptors: Float32Array[]) {
  const rows = []
  for (const k of [1, 2, 3]) {
    const byPerson = new Map<string, number[]>()
    photos.forEach((p, i) => { if (p.identity) byPerson.set(p.identity, [...(byPerson.get(p.identity) ?? []), i]) })
    const enrolled = new Map([...byPerson].map(([id, is]) => [id, is.slice(0, Math.min(k, is.length - 1))]))
    const enrolledIndexes = new Set([...enrolled.values()].flat())
    const right: number[] = [], impostors: number[] = [], best: { identity: string; named: string; s: number }[] = []
    photos.forEach((p, i) => {
      if (enrolledIndexes.has(i)) return
      const ranked = [...enrolled].map(([id, js]) => ({ id, s: Math.max(...js.map((j) => cosine(descriptors[i]!, descriptors[j]!))) })).sort((a, b) => b.s - a.s)
      best.push({ identity: p.identity, named: ranked[0]!.id, s: ranked[0]!.s })
      if (!p.identity) { impostors.push(ranked[0]!.s); return }
      right.push(ranked.find((r) => r.id === p.identity)!.s)
      impostors.push(ranked.find((r) => r.id !== p.identity)!.s)
    })
    const impostor = Math.max(...impostors)
    rows.push({
      picturesPerPerson: k, enrolled: enrolledIndexes.size, probes: right.length,
      top1: best.filter((b) => b.identity && b.named === b.identity).length,
      right: stats(right), strongestImpostor: r4(impostor), gap: r4(Math.min(...right) - impostor),
      rightAboveEveryImpostor: best.filter((b) => b.identity && b.named === b.identity && b.s > impostor).length,
    })
  }
  console.log(JSON.stringify(rows))
  return rows
}

async function main() {
  const candidateDir = path.join(outDir, 'face-candidates')
  mkdirSync(candidateDir, { recursive: true })
  const landmarkJson = await writeFaceApiLandmarksGraph(root, path.join(candidateDir, 'landmarks'))
  await buildModels([{ name: 'face-landmarks-68', modelJson: landmarkJson, purpose: 'candidate' }], candidateDir, root)
  const options: ort.InferenceSession.SessionOptions = { executionProviders: ['cpu'], intraOpNumThreads: 2, interOpNumThreads: 1, graphOptimizationLevel: 'all', logSeverityLevel: 3, extra: { session: { intra_op: { allow_spinning: '0' } } } }
  const landmarkSession = await ort.InferenceSession.create(path.join(candidateDir, 'face-landmarks-68.onnx'), options)
  const descriptorSession = await ort.InferenceSession.create(path.join(root, 'dist/models/face-recognition-resnet.onnx'), options)
  const engine = new InferenceEngine({ projectRoot: root, intraOpThreads: 2, limits: { maxEncodedImageBytes: 32 << 20, maxImagePixels: 64_000_000 } })

  const photos: Photo[] = []
  const noFace: string[] = []
  for (const { file, identity } of readLabels(facesDir)) {
    const bytes = readFileSync(path.join(facesDir, file))
    const { data, info } = await sharp(bytes).autoOrient().removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true })
    const face = (await engine.describe({ algorithmId: 'face-recognition', image: { kind: 'bytes', bytes } })).sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height)[0]
    if (!face) { noFace.push(file); continue }
    photos.push({ file, identity, image: { data, width: info.width, height: info.height }, keypoints: face.landmark.map((p) => ({ x: p.xRatio, y: p.yRatio })), box: face.box })
  }

  /** face-api's 68 points in photo pixels, its input cut by `toSquare` (photo → 112² square). */
  const landmarks = async (image: RgbImage, toSquare: Similarity) => {
    const out = (await landmarkSession.run({ [landmarkSession.inputNames[0]!]: tensorOf(warpSimilarity(image, toSquare, LM, LM), LM) }))[landmarkSession.outputNames[0]!]!.data as Float32Array
    const back = invert(toSquare)
    return Array.from({ length: 68 }, (_, i) => apply(back, { x: out[2 * i]! * LM, y: out[2 * i + 1]! * LM }))
  }
  const describe = async (chip: RgbImage, mirror = false) => {
    const run = async (m: boolean) => Float32Array.from((await descriptorSession.run({ [descriptorSession.inputNames[0]!]: tensorOf(chip, CHIP, m) }))[descriptorSession.outputNames[0]!]!.data as Float32Array)
    const d = await run(false)
    if (!mirror) return d
    const e = await run(true)
    return Float32Array.from(d, (v, i) => (v + e[i]!) / 2)
  }
  const variants: { name: string; describe: (p: Photo) => Promise<Float32Array> }[] = [
    { name: 'shipped: BlazeFace 4 points → dlib chip', describe: (p) => describe(warpSimilarity(p.image, shippedChip(p.keypoints), CHIP, CHIP)) },
    { name: 'shipped chip + mirror average', describe: (p) => describe(warpSimilarity(p.image, shippedChip(p.keypoints), CHIP, CHIP), true) },
    { name: 'shipped chip, box-filtered photo', describe: (p) => describe(warpFiltered(p.image, shippedChip(p.keypoints), CHIP)) },
    { name: '68 points (BlazeFace box × 1.4) → dlib 68-point chip', describe: async (p) => describe(warpSimilarity(p.image, chip68(await landmarks(p.image, uprightSquare(p.box, 1.4))), CHIP, CHIP)) },
    { name: '68 points (BlazeFace box × 1.0) → dlib 68-point chip', describe: async (p) => describe(warpSimilarity(p.image, chip68(await landmarks(p.image, uprightSquare(p.box, 1.0))), CHIP, CHIP)) },
    { name: '68 points (BlazeFace chip, padding 0.2) → dlib 68-point chip', describe: async (p) => describe(warpSimilarity(p.image, chip68(await landmarks(p.image, shippedChip(p.keypoints, 0.2, LM))), CHIP, CHIP)) },
    { name: '68 points (BlazeFace box × 1.4) → dlib 5-point chip', describe: async (p) => describe(warpSimilarity(p.image, chip5(await landmarks(p.image, uprightSquare(p.box, 1.4))), CHIP, CHIP)) },
    { name: '68 points (BlazeFace box × 1.4), box-filtered → dlib 68-point chip', describe: async (p) => describe(warpFiltered(p.image, chip68(await landmarks(p.image, uprightSquare(p.box, 1.4))), CHIP)) },
  ]

  // Warm both sessions up, then time each network alone on one face (p50 of the photos).
  const inference = { landmarksMsP50: 0, descriptorMsP50: 0 }
  {
    const p50 = (xs: number[]) => Math.round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]! * 100) / 100
    await variants[0]!.describe(photos[0]!)
    const lm: number[] = [], desc: number[] = []
    for (const p of photos) {
      const square = tensorOf(warpSimilarity(p.image, uprightSquare(p.box, 1.4), LM, LM), LM)
      let started = performance.now()
      await landmarkSession.run({ [landmarkSession.inputNames[0]!]: square })
      lm.push(performance.now() - started)
      const chip = tensorOf(warpSimilarity(p.image, shippedChip(p.keypoints), CHIP, CHIP), CHIP)
      started = performance.now()
      await descriptorSession.run({ [descriptorSession.inputNames[0]!]: chip })
      desc.push(performance.now() - started)
    }
    inference.landmarksMsP50 = p50(lm)
    inference.descriptorMsP50 = p50(desc)
    console.log(JSON.stringify(inference))
  }

  const report = []
  const several: ReturnType<typeof severalEnrolled> = []
  for (const v of variants) {
    const descriptors: Float32Array[] = [], times: number[] = []
    for (const p of photos) {
      const started = performance.now()
      descriptors.push(await v.describe(p))
      times.push(performance.now() - started)
    }
    if (v === variants[0]) several.push(...severalEnrolled(photos, descriptors))
    for (const [measure, similarity] of [['cosine', cosine], ['1 − Euclidean distance', oneMinusDistance]] as const) {
      const enrolled = new Map<string, number>()
      photos.forEach((p, i) => { if (p.identity && !enrolled.has(p.identity)) enrolled.set(p.identity, i) })
      const right: number[] = [], wrong: number[] = [], stranger: number[] = []
      const best: { file: string; identity: string; named: string; similarity: number }[] = []
      let top1 = 0
      photos.forEach((p, i) => {
        if ([...enrolled.values()].includes(i)) return
        const ranked = [...enrolled].map(([id, j]) => ({ id, s: similarity(descriptors[i]!, descriptors[j]!) })).sort((a, b) => b.s - a.s)
        best.push({ file: p.file, identity: p.identity, named: ranked[0]!.id, similarity: r4(ranked[0]!.s)! })
        if (!p.identity) { stranger.push(ranked[0]!.s); return }
        if (ranked[0]!.id === p.identity) top1++
        right.push(ranked.find((r) => r.id === p.identity)!.s)
        wrong.push(ranked.find((r) => r.id !== p.identity)!.s)
      })
      const impostor = Math.max(...wrong, ...stranger)
      const strongest = best.filter((b) => !b.identity).sort((a, b) => b.similarity - a.similarity)[0]!
      const row = {
        alignment: v.name, measure, probes: right.length, top1,
        right: stats(right), bestWrong: stats(wrong), strangersBest: stats(stranger),
        gap: r4(Math.min(...right) - impostor),
        rightAboveEveryImpostor: best.filter((b) => b.identity && b.named === b.identity && b.similarity > impostor).length,
        strongestStranger: `${strongest.file} → ${strongest.named} ${strongest.similarity}`,
        weakestRight: best.filter((b) => b.identity).sort((a, b) => a.similarity - b.similarity).slice(0, 3).map((b) => `${b.file} ${b.similarity}`),
        describeMsP50: Math.round([...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]! * 10) / 10,
      }
      report.push(row)
      console.log(JSON.stringify(row))
    }
  }
  writeFileSync(process.env.FACE_ALIGN_BENCH_OUT ?? path.join(outDir, 'face-alignment.json'), JSON.stringify({ photos: photos.length, noFace, faces: path.relative(root, facesDir), at: new Date().toISOString(), inference, variants: report, severalEnrolled: several }, null, 1) + '\n')
  await landmarkSession.release()
  await descriptorSession.release()
  await engine.close()
}

await main()
