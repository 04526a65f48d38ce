/**
 * Every shipped algorithm (models/manifests/*.json), two comparisons each, measured in one run:
 *
 *   (1) raw model inference: each model of the pipeline on onnxruntime-node (the file the
 *       device loads: dist/models/<name>.onnx for conversions, the package file otherwise,
 *       same session options as the sidecar) vs — for models the build converted from TF.js
 *       (models/convert/sources.ts) — the same TF.js graph model on @tensorflow/tfjs's CPU
 *       backend. The input is the tensor the pipeline's node feeds the model, prepared from
 *       the algorithm's bench image (whole image for classifier nodes). Models that ship as
 *       ONNX (BlazeFace, PP-OCR) or that an operator uploads (helmet classifier) have no TF.js
 *       twin: their ONNX time is reported in `details` without a baseline. One figure per
 *       algorithm with converted models: the sum of their medians (target: ONNX ≤ 1× TF.js).
 *   (2) end to end: PTaskDetectPic over HTTP (imageBase64, result with fullPicture) on the
 *       built device vs the raw pipeline in process (InferenceEngine, bundled like the
 *       sidecar: decode, pipeline, result, overlay JPEG — the overlay the HTTP path draws),
 *       interleaved request by request (which goes first alternates) on the same image. Figures: p50 and p90 (target: ≤ 1.3× raw).
 *
 * (2) runs first, and the device is stopped before (1) loads the TF.js models into this
 * process, so neither side of (2) shares the machine or the heap with TF.js.
 *
 * Images: @vladmandic/face-api demo/sample1.jpg (1920×1280, 3 people); text-ocr reads the
 * three text lines its tests render (test/inference/images.ts). The helmet classifier is the
 * tests' small ONNX model (test/helpers/tiny-models.ts), uploaded through
 * /gtw/cwai/atomic/Model/upload as `helmet-classifier` and written to the in-process
 * engine's DATA_DIR/models/helmet-classifier.onnx.
 *
 * Run: `npm run bench -- algorithms` (or `node build.mjs && npx tsx bench/algorithms.bench.ts
 * [algorithmId ...]`) → bench/out/algorithms.json. ~4 min on 2 cores (the TF.js CenterNet
 * alone takes ~15 s a pass). BENCH_RUNS / BENCH_WARMUP change the measured / warm-up counts.
 */
import { randomUUID } from 'node:crypto'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { defaultManifestDir, loadManifests, type LoadedManifest } from '../models/load-manifests.ts'
import { prepareInput } from '../runtime/sidecar/pipeline/rgb-image.ts'
import { helmetClassifier } from '../test/helpers/tiny-models.ts'
import { uploadFile } from '../test/helpers/upload-file.ts'
import { renderTextLines } from '../test/inference/images.ts'
import { loadBundledEngine } from './lib/bundled-engine.ts'
import { startBenchDevice } from './lib/device-process.ts'
import { describeSource, measureRawModel, type RawModelTiming } from './lib/raw-models.ts'
import { figure, writeReport, type Figure } from './lib/report.ts'
import { percentile, summarize, type RunBounds, type Timing } from './lib/timing.ts'

const root = path.resolve(import.meta.dirname, '..')
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3)
const RUNS = Number(process.env.BENCH_RUNS ?? 15)
const THREADS = 2
const ONNX_BOUNDS: RunBounds = { warmup: WARMUP, minRuns: RUNS, maxRuns: RUNS, budgetMs: 0 }
/** TF.js CPU takes up to ~15 s a pass (CenterNet): at least 3 passes, more while 10 s last. Its first (compared) run is the warm-up. */
const TFJS_BOUNDS: RunBounds = { warmup: 0, minRuns: 3, maxRuns: RUNS, budgetMs: 10_000 }
const limits = { maxEncodedImageBytes: 32 * 1024 * 1024, maxImagePixels: 64_000_000 }

interface BenchImage { name: string; bytes: Buffer }
const photo: BenchImage = { name: 'sample1.jpg (1920x1280, 3 people)', bytes: await readFile(path.join(root, 'node_modules/@vladmandic/face-api/demo/sample1.jpg')) }
const textLines = ['INVOICE 4711', 'Delivery to Berlin', 'Total 93.50 EUR']
const text: BenchImage = { name: `rendered text lines (900x390 PNG: ${textLines.join(' / ')})`, bytes: await renderTextLines(textLines) }
/** The image each algorithm is measured on (data, not code): sample1.jpg unless named here. */
const imageOf: Record<string, BenchImage> = { 'text-ocr': text }
const benchImage = (algorithmId: string) => imageOf[algorithmId] ?? photo

// The in-process engine's DATA_DIR: where it reads the operator-uploaded helmet classifier.
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-algorithms-'))
const helmet = Buffer.from(helmetClassifier())
await mkdir(path.join(dataDir, 'models'), { recursive: true })
await writeFile(path.join(dataDir, 'models', 'helmet-classifier.onnx'), helmet)

const only = process.argv.slice(2)
const manifests = [...loadManifests(defaultManifestDir(root), root, dataDir).values()].filter((m) => only.length === 0 || only.includes(m.manifest.algorithmId))
if (manifests.length === 0) throw new Error(`no algorithm matches ${only.join(', ')}`)
// The in-process baseline runs the sidecar's code compiled as the device compiles it (bench/lib/bundled-engine.ts).
const { InferenceEngine } = await loadBundledEngine()
const engine = new InferenceEngine({ projectRoot: root, dataPath: dataDir, intraOpThreads: THREADS, limits })
const loadAtStart = os.loadavg()

// ── (2) end to end, measured first: HTTP PTaskDetectPic vs the raw pipeline in process ─
type Run = () => Promise<number>
const targetCount = (areaList: { targetList: unknown[] }[]) => areaList.reduce((n, a) => n + a.targetList.length, 0)

interface EndToEnd { image: string; targets: number; rawInProcess: Timing; httpDetectPic: Timing; pairedRatioMedian: number; loadAverage1mAtEnd: number; rawStageMedianMs: Record<string, number> }

/**
 * Warm-up, then RUNS rounds of one raw and one HTTP request back to back, so machine load
 * hits both alike; which one goes first alternates, so neither always runs while the other's
 * after-work (the runtime's logging, GC) is still going on.
 */
async function compare(raw: Run, http: Run, label: string): Promise<{ raw: Timing; http: Timing; pairedRatioMedian: number; targets: number }> {
  for (let i = 0; i < WARMUP; i++) { await raw(); await http() }
  const times = { raw: [] as number[], http: [] as number[] }
  let targets = -1
  for (let i = 0; i < RUNS; i++)
    for (const [key, run] of (i % 2 === 0 ? [['raw', raw], ['http', http]] as const : [['http', http], ['raw', raw]] as const)) {
      const started = performance.now()
      const found = await run()
      times[key].push(performance.now() - started)
      // Both paths run the same pipeline on the same bytes: a different count means different work.
      if (targets !== -1 && found !== targets) throw new Error(`${label}: ${key} found ${found} targets, the other path ${targets}`)
      targets = found
    }
  // The median of each round's http / raw: less moved by load that changes during the run than the ratio of the two medians.
  const pairedRatioMedian = +percentile(times.http.map((ms, i) => ms / times.raw[i]!), 50).toFixed(3)
  return { raw: summarize(times.raw), http: summarize(times.http), pairedRatioMedian, targets }
}

async function measureEndToEnd(): Promise<Map<string, EndToEnd>> {
  const endToEnd = new Map<string, EndToEnd>()
  const device = await startBenchDevice({ INFERENCE_THREADS: String(THREADS) })
  try {
    const mtk = await device.signIn()
    const post = async (route: string, body: unknown) => {
      const response = await fetch(device.url + route, { method: 'POST', headers: { 'content-type': 'application/json', mtk }, body: JSON.stringify(body) })
      const json = await response.json() as { resCode: number; resData?: any; resMsg?: unknown }
      if (json.resCode !== 1) throw new Error(`${route}: ${JSON.stringify(json)}`)
      return json.resData
    }
    if (manifests.some((m) => Object.values(m.manifest.models).some((e) => 'uploaded' in e.source && e.source.uploaded === 'helmet-classifier'))) {
      const uploadId = await uploadFile(device, mtk, helmet, 'helmet.onnx', 'model')
      await post('/gtw/cwai/atomic/Model/upload', { uploadId, modelId: 'helmet-classifier', modelName: 'Helmet classifier (bench)' })
    }
    for (const loaded of manifests) {
      const algorithmCode = loaded.manifest.algorithmId
      const image = benchImage(algorithmCode)
      const imageBase64 = image.bytes.toString('base64')
      const taskId = `bench-${algorithmCode}-${randomUUID().slice(0, 8)}`
      await post('/gtw/cwai/aihost/PTaskCreate', { taskId, algorithmCode, algorithmUpdateTime: String(Date.now()) })
      await engine.load(taskId, algorithmCode)
      const stages: Record<string, number[]> = {}
      try {
        const rawPipeline: Run = async () => {
          const outcome = await engine.detect({ handle: taskId, image: { kind: 'bytes', bytes: image.bytes } })
          if (!outcome.overlayJpeg) throw new Error('no overlay')
          for (const [stage, ms] of Object.entries(outcome.timings)) (stages[stage] ??= []).push(ms)
          return targetCount(outcome.result.areaList)
        }
        const httpFlow: Run = async () => {
          const resData = await post('/gtw/cwai/aihost/PTaskDetectPic', { taskId, algorithmCode, imageBase64 })
          if (!String(resData.fullPicture).startsWith('data:image/jpeg;base64,')) throw new Error('no fullPicture')
          return targetCount(resData.areaList)
        }
        const r = await compare(rawPipeline, httpFlow, algorithmCode)
        const rawStageMedianMs = Object.fromEntries(Object.entries(stages).map(([stage, ms]) => [stage, summarize(ms).medianMs]))
        endToEnd.set(algorithmCode, { image: image.name, targets: r.targets, rawInProcess: r.raw, httpDetectPic: r.http, pairedRatioMedian: r.pairedRatioMedian, loadAverage1mAtEnd: +os.loadavg()[0]!.toFixed(2), rawStageMedianMs })
        console.log(`${algorithmCode.padEnd(26)} ${r.targets} targets   raw p50 ${String(r.raw.medianMs).padStart(8)} ms   http p50 ${String(r.http.medianMs).padStart(8)} ms   (p90 ${r.raw.p90Ms} / ${r.http.p90Ms}; paired ratio ${r.pairedRatioMedian}; load ${os.loadavg()[0]!.toFixed(1)})`)
      } finally {
        await engine.release(taskId)
        await post('/gtw/cwai/aihost/PTaskCancle', { taskId })
      }
    }
  } finally {
    await device.stop()
  }
  return endToEnd
}

// ── (1) raw model inference, each model file once (pipelines share them); after (2), so
// the in-process baseline never shares its heap with the TF.js models ──────────────────
type RawModel = RawModelTiming & { model: string }
async function measureRawModels(): Promise<Map<string, RawModel>> {
  const rawByFile = new Map<string, RawModel>()
  for (const loaded of manifests) {
    const image = await engine.decode({ kind: 'bytes', bytes: benchImage(loaded.manifest.algorithmId).bytes }, 'image')
    for (const [model, file] of Object.entries(loaded.modelPaths)) {
      if (rawByFile.has(file)) continue
      const node = loaded.manifest.nodes.find((n) => 'model' in n && n.model === model)
      if (!node || !('input' in node)) throw new Error(`${loaded.manifest.algorithmId}: no node runs model ${model}`)
      const prepared = await prepareInput(image, node.input)
      const timing = await measureRawModel({
        file, source: loaded.manifest.models[model]!.source, projectRoot: root, intraOpThreads: THREADS,
        input: { name: node.input.name, dims: prepared.dims, data: prepared.data },
        onnxBounds: ONNX_BOUNDS, tfjsBounds: TFJS_BOUNDS,
      })
      rawByFile.set(file, { model, ...timing })
      console.log(`${model.padEnd(16)} [${timing.input.join(',')}] onnxruntime ${String(timing.onnxruntime.medianMs).padStart(8)} ms   tfjs-cpu ${timing.tfjsCpu ? `${timing.tfjsCpu.medianMs} ms` : `– (${timing.note})`}`)
    }
  }
  return rawByFile
}

let endToEnd: Map<string, EndToEnd>
let rawByFile: Map<string, RawModel>
try {
  endToEnd = await measureEndToEnd()
  rawByFile = await measureRawModels()
} finally {
  await engine.close()
  await rm(dataDir, { recursive: true, force: true })
}
const rawModelsOf = (loaded: LoadedManifest) => Object.values(loaded.modelPaths).map((file) => rawByFile.get(file)!)

// ── report ────────────────────────────────────────────────────────────────────────────
const sum = (values: number[]) => Math.round(values.reduce((a, b) => a + b, 0) * 100) / 100
const RAW = 'raw pipeline in process (InferenceEngine bundled like the sidecar: decode, pipeline, result, overlay JPEG)'
const figures: Figure[] = []
const perAlgorithm = []
for (const loaded of manifests) {
  const id = loaded.manifest.algorithmId
  const models = rawModelsOf(loaded)
  const converted = models.filter((m) => m.tfjsCpu !== null)
  if (converted.length > 0)
    figures.push(figure({
      name: `${id}: raw inference of its converted models (${converted.map((m) => m.model).join(' + ')}), median`,
      unit: 'ms',
      value: sum(converted.map((m) => m.onnxruntime.medianMs)),
      baseline: { name: 'the same TF.js graph models on @tensorflow/tfjs CPU', value: sum(converted.map((m) => m.tfjsCpu!.medianMs)) },
      // the conversion is worth shipping only if onnxruntime beats the TF.js CPU backend
      target: { ratioAtMost: 1 },
    }))
  const e2e = endToEnd.get(id)!
  figures.push(
    figure({ name: `${id}: PTaskDetectPic over HTTP, p50`, unit: 'ms', value: e2e.httpDetectPic.medianMs, baseline: { name: RAW, value: e2e.rawInProcess.medianMs }, target: { ratioAtMost: 1.3 } }),
    figure({ name: `${id}: PTaskDetectPic over HTTP, p90`, unit: 'ms', value: e2e.httpDetectPic.p90Ms, baseline: { name: RAW, value: e2e.rawInProcess.p90Ms }, target: { ratioAtMost: 1.3 } }),
  )
  perAlgorithm.push({
    algorithmId: id,
    rawModels: models.map((m) => ({
      model: m.model, source: m.source, input: m.input, onnxruntime: m.onnxruntime, tfjsCpu: m.tfjsCpu,
      ...(m.tfjsCpu ? { speedup: Math.round((m.tfjsCpu.medianMs / m.onnxruntime.medianMs) * 10) / 10, maxAbsDiff: m.maxAbsDiff } : { note: m.note }),
    })),
    endToEnd: e2e,
  })
}

const file = await writeReport({
  benchmark: 'algorithms',
  description: 'Every shipped algorithm: raw inference of its converted models on onnxruntime-node vs the same TF.js graph models on @tensorflow/tfjs CPU (models shipped as ONNX: ONNX time only, no baseline), and PTaskDetectPic over HTTP vs the raw pipeline in process, interleaved, same image, one run',
  settings: {
    algorithms: manifests.map((m) => m.manifest.algorithmId),
    images: { default: photo.name, ...Object.fromEntries(Object.entries(imageOf).map(([id, img]) => [id, img.name])) },
    endToEnd: { warmupRoundsEach: WARMUP, measuredRequestsEach: RUNS, clients: 1, httpRequest: 'PTaskDetectPic with imageBase64 (one request), fullPicture as data: URL', deviceInferenceThreads: THREADS },
    rawModels: { onnx: ONNX_BOUNDS, tfjs: TFJS_BOUNDS, onnxIntraOpThreads: THREADS, tfjsBackend: 'cpu (pure JavaScript, one thread)', input: 'the tensor the pipeline node feeds the model, from the bench image (whole image for classifiers)' },
    cpus: os.cpus().length,
    // other processes on the shared machine slow both sides alike; the load average tells how busy it was
    loadAverage: { start: loadAtStart.map((v) => +v.toFixed(2)), end: os.loadavg().map((v) => +v.toFixed(2)) },
  },
  figures,
  details: {
    perAlgorithm,
    rawModelsByFile: Object.fromEntries([...rawByFile.values()].map((m) => [m.source, { model: m.model, onnxMedianMs: m.onnxruntime.medianMs, tfjsMedianMs: m.tfjsCpu?.medianMs ?? null }])),
    modelSources: Object.fromEntries(manifests.map((m) => [m.manifest.algorithmId, Object.entries(m.manifest.models).map(([k, e]) => `${k} = ${describeSource(e.source)}`)])),
  },
})
console.log(`written ${file}`)
