/**
 * The person detector (CenterNet MobileNetV3, the person-detector manifest's decoder) at one
 * channel: fp32 / int8 × 512 / 320 input, all four in one run, interleaved round by round so
 * that the load of the machine falls on each alike. Baseline: fp32 at 512 (the shipped
 * model before int8 and the size setting).
 *
 * Latency = onnxruntime `run` of one letterboxed frame (the detector's cost; decode and resize
 * are the frame source's), the device's session options (SessionPool: INFERENCE_THREADS
 * intra-op threads, no spinning). p50 over ROUNDS × the inputs; beside it the CPU time per
 * inference (all threads), which other processes' load changes less.
 *
 * Accuracy, measured on the same inputs in the same run, against a ground truth counted by eye
 * on the images (not against another model's output):
 * - the six sample photos of @vladmandic/face-api (3, 3, 3, 4, 5, 4 = 22 people);
 * - one frame every 10 s of one-by-one-person-detection.mp4 (ffmpeg fps=1/10: 14 frames, a
 *   person on 12; frame 5 shows only a shoe at the edge and is left out).
 * persons found = Σ min(boxes, people); extra = Σ boxes beyond the people. Beside it, each
 * variant against fp32-512 box by box (greedy IoU matching): same count per image, lowest IoU.
 *
 * Run: `flock /work/bench.lock npx tsx bench/detector-latency.bench.ts` (after `npm run build`)
 * → bench/out/detector-latency.json.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import * as ort from 'onnxruntime-node'
import type { DetectorNode, PipelineManifest } from '../models/manifest-schema.ts'
import { threadsForMachine } from '../shared/config.ts'
import { decodeImage } from '../runtime/sidecar/image/decode.ts'
import { createCenternetDecoder } from '../runtime/sidecar/pipeline/decoders/centernet.ts'
import type { Detection } from '../runtime/sidecar/pipeline/detection.ts'
import { prepareInput, type PreparedInput } from '../runtime/sidecar/pipeline/rgb-image.ts'
import { figure, writeReport } from './lib/report.ts'
import { percentile } from './lib/timing.ts'

const root = path.resolve(import.meta.dirname, '..')
const mediaDir = process.env.MEDIA_DIR ?? path.resolve(root, '../shared/media')
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8)
const THREADS = Number(process.env.INFERENCE_THREADS ?? threadsForMachine())
const loadAverageAtStart = os.loadavg().map((v) => +v.toFixed(2))

const variants = [
  { name: 'fp32-512', file: 'centernet', size: 512 },
  { name: 'int8-512', file: 'centernet-int8', size: 512 },
  { name: 'fp32-320', file: 'centernet-320', size: 320 },
  { name: 'int8-320', file: 'centernet-320-int8', size: 320 },
] as const

/** People counted on each image (see the header). */
const photoTruth = [3, 3, 3, 4, 5, 4]
const frameTruth: (number | null)[] = [0, 1, 1, 1, null, 1, 1, 1, 1, 1, 1, 1, 1, 1]

function images(): { name: string; bytes: Buffer; truth: number }[] {
  const out = photoTruth.map((truth, i) => ({
    name: `sample${i + 1}.jpg`, truth,
    bytes: readFileSync(path.join(root, 'node_modules/@vladmandic/face-api/demo', `sample${i + 1}.jpg`)),
  }))
  const dir = mkdtempSync(path.join(os.tmpdir(), 'detector-frames-'))
  try {
    execFileSync('ffmpeg', ['-loglevel', 'error', '-i', path.join(mediaDir, 'one-by-one-person-detection.mp4'), '-vf', 'fps=1/10', '-q:v', '2', path.join(dir, 'f%02d.jpg')])
    const files = readdirSync(dir).sort()
    if (files.length !== frameTruth.length) throw new Error(`expected ${frameTruth.length} frames, ffmpeg wrote ${files.length}`)
    files.forEach((f, i) => { if (frameTruth[i] !== null) out.push({ name: `one-by-one ${f}`, truth: frameTruth[i]!, bytes: readFileSync(path.join(dir, f)) }) })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  return out
}

const iou = (a: Detection['box'], b: Detection['box']) => {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x)
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y)
  const inter = Math.max(0, w) * Math.max(0, h)
  return inter / (a.width * a.height + b.width * b.height - inter)
}

/** Greedy one-to-one matching by IoU: the IoU of each pair (as many pairs as the smaller list). */
function matchIous(a: Detection[], b: Detection[]): number[] {
  const pairs = a.flatMap((da, i) => b.map((db, j) => ({ i, j, v: iou(da.box, db.box) }))).sort((x, y) => y.v - x.v)
  const usedA = new Set<number>(), usedB = new Set<number>(), out: number[] = []
  for (const p of pairs) if (!usedA.has(p.i) && !usedB.has(p.j)) { usedA.add(p.i); usedB.add(p.j); out.push(p.v) }
  return out
}

const manifest = JSON.parse(readFileSync(path.join(root, 'models/manifests/person-detector.json'), 'utf8')) as PipelineManifest
const node = manifest.nodes.find((n) => n.action === 'detector') as DetectorNode
if (node.decoder.kind !== 'centernet') throw new Error('person-detector: expected the centernet decoder')
const decode = createCenternetDecoder(node.decoder)
const threshold = node.scoreThreshold

const limits = { maxEncodedImageBytes: 64 << 20, maxImagePixels: 64e6 }
const inputs = images()
const decoded = await Promise.all(inputs.map((i) => decodeImage({ kind: 'bytes', bytes: i.bytes }, limits)))

const runs = await Promise.all(variants.map(async (v) => {
  const session = await ort.InferenceSession.create(path.join(root, 'dist/models', `${v.file}.onnx`), {
    executionProviders: ['cpu'], intraOpNumThreads: THREADS, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all', logSeverityLevel: 3, extra: { session: { intra_op: { allow_spinning: '0' } } },
  })
  const spec = { ...node.input, width: v.size, height: v.size }
  const prepared: PreparedInput[] = []
  for (const image of decoded) prepared.push(await prepareInput(image, spec))
  return { ...v, session, prepared, times: [] as number[], cpuMs: 0, detections: [] as Detection[][] }
}))

const infer = async (run: (typeof runs)[number], k: number) => {
  const p = run.prepared[k]!
  return run.session.run({ [run.session.inputNames[0]!]: new ort.Tensor('float32', p.data, p.dims) })
}

// accuracy (and warm-up)
for (const run of runs) for (let k = 0; k < inputs.length; k++) run.detections.push(decode(await infer(run, k), run.prepared[k]!, threshold))
// latency: interleaved rounds
for (let r = 0; r < ROUNDS; r++)
  for (const run of runs) {
    const cpu = process.cpuUsage()
    for (let k = 0; k < inputs.length; k++) {
      const started = performance.now()
      await infer(run, k)
      run.times.push(performance.now() - started)
    }
    const used = process.cpuUsage(cpu)
    run.cpuMs += (used.user + used.system) / 1000
  }

const reference = runs[0]!
const results = runs.map((run) => {
  const found = inputs.reduce((s, input, k) => s + Math.min(run.detections[k]!.length, input.truth), 0)
  const extra = inputs.reduce((s, input, k) => s + Math.max(0, run.detections[k]!.length - input.truth), 0)
  const photos = inputs.slice(0, photoTruth.length).reduce((s, input, k) => s + Math.min(run.detections[k]!.length, input.truth), 0)
  const sameCount = inputs.filter((_, k) => run.detections[k]!.length === reference.detections[k]!.length).length
  const ious = inputs.flatMap((_, k) => matchIous(run.detections[k]!, reference.detections[k]!))
  return {
    variant: run.name,
    p50Ms: +percentile(run.times, 50).toFixed(1),
    p90Ms: +percentile(run.times, 90).toFixed(1),
    /** CPU time (all threads) per inference: the cost, less sensitive than latency to other processes' load. */
    cpuMsPerInference: +(run.cpuMs / run.times.length).toFixed(1),
    personsFound: found,
    personsOnPhotos: photos,
    extraBoxes: extra,
    imagesWithFp32Count: sameCount,
    lowestIouToFp32: ious.length ? +Math.min(...ious).toFixed(3) : null,
    meanIouToFp32: ious.length ? +(ious.reduce((a, b) => a + b, 0) / ious.length).toFixed(3) : null,
    perImage: inputs.map((input, k) => `${input.name}: ${run.detections[k]!.length}/${input.truth}`),
  }
})
const truthTotal = inputs.reduce((s, i) => s + i.truth, 0)
const base = results[0]!
const loadAverageAtEnd = os.loadavg().map((v) => +v.toFixed(2))
for (const r of results) console.log(`${r.variant}: p50 ${r.p50Ms} ms, cpu ${r.cpuMsPerInference} ms, persons ${r.personsFound}/${truthTotal} (photos ${r.personsOnPhotos}/22), extra ${r.extraBoxes}, same count as fp32-512 on ${r.imagesWithFp32Count}/${inputs.length}, IoU min ${r.lowestIouToFp32}`)
console.log('load average', loadAverageAtStart, '→', loadAverageAtEnd)

const file = await writeReport({
  benchmark: 'detector-latency',
  description: 'Person detector (CenterNet) inference at one channel, fp32/int8 × 512/320, with persons found against a counted truth on the same inputs; baseline fp32 at 512',
  settings: { rounds: ROUNDS, threads: THREADS, inputs: inputs.length, personsInTruth: truthTotal, scoreThreshold: threshold, loadAverageAtStart, loadAverageAtEnd },
  figures: [
    ...results.slice(1).map((r) => figure({ name: `detector p50, ${r.variant}`, unit: 'ms', value: r.p50Ms, baseline: { name: 'fp32-512 p50', value: base.p50Ms }, target: { valueAtMost: 30 } })),
    ...results.map((r) => figure({ name: `persons found, ${r.variant}`, unit: 'persons', value: r.personsFound, baseline: { name: 'people counted', value: truthTotal }, target: { ratioAtLeast: base.personsFound / truthTotal } })),
  ],
  details: { results },
})
console.log(`wrote ${file}`)
for (const run of runs) await run.session.release()
