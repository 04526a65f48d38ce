/**
 * Detection speed: sample1.jpg (1920×1280, 3 faces) through the face algorithm.
 *
 *   (a) raw pipeline in process — decode, preprocess, session.run, postprocess, overlay and
 *       JPEG encode (InferenceEngine, no socket, no HTTP);
 *   (b) the full HTTP flow of the device (runtime + sidecar): uploadTemp of the image (one
 *       chunk) then PTaskDetectPic with its uploadId; result with fullPicture as data: URL.
 *
 * Both are measured in the same run and interleaved (a, b, a, b, …; throughput in
 * alternating rounds) so that the load of a shared machine affects both alike. Figures: p50 /
 * p90 latency of one client, throughput of 4 concurrent clients, and the medians of (b)'s two
 * HTTP steps. Targets (issue 4): (b) p50 ≤ 1.2 × (a) p50; (b) 4-client throughput ≥ 0.9 × (a).
 * Run: `npm run bench -- detect` (or `node build.mjs && npx tsx bench/detect.bench.ts`)
 * → bench/out/detect.json.
 */
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { loadBundledEngine } from './lib/bundled-engine.ts'
import { startBenchDevice } from './lib/device-process.ts'
import { BenchClient } from './lib/http-client.ts'
import { figure, writeReport } from './lib/report.ts'

const root = path.resolve(import.meta.dirname, '..')
const image = readFileSync(path.join(root, 'node_modules/@vladmandic/face-api/demo/sample1.jpg'))
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 30)
const ROUND = Number(process.env.BENCH_ROUND ?? 20)
const ROUNDS = 2
const CLIENTS = 4
const WARMUP = 3

const loadAverageAtStart = os.loadavg().map((v) => +v.toFixed(2))

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}
const round1 = (v: number) => +v.toFixed(1)

type Run = () => Promise<number>
/** Stage times of (b) are recorded in the one-client phase only. */
let sequentialPhase = true

/** `total` requests from `CLIENTS` concurrent clients; returns elapsed seconds. */
async function concurrent(run: Run, total: number): Promise<number> {
  let next = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: CLIENTS }, async () => { while (next++ < total) await run() }))
  return (performance.now() - started) / 1000
}

async function compare(a: Run, b: Run) {
  for (let i = 0; i < WARMUP; i++) { await a(); await b() }
  const lat = { a: [] as number[], b: [] as number[] }
  for (let i = 0; i < SEQUENTIAL; i++)
    for (const [key, run] of [['a', a], ['b', b]] as const) {
      const started = performance.now()
      const faces = await run()
      lat[key].push(performance.now() - started)
      if (faces !== 3) throw new Error(`(${key}): expected 3 faces, got ${faces}`)
    }
  sequentialPhase = false
  const seconds = { a: 0, b: 0 }
  for (let r = 0; r < ROUNDS; r++) { seconds.a += await concurrent(a, ROUND); seconds.b += await concurrent(b, ROUND) }
  const figures = (key: 'a' | 'b') => ({
    p50Ms: round1(percentile(lat[key], 50)),
    p90Ms: round1(percentile(lat[key], 90)),
    meanMs: round1(lat[key].reduce((s, v) => s + v, 0) / lat[key].length),
    throughput4ClientsPerSec: +((ROUND * ROUNDS) / seconds[key]).toFixed(2),
  })
  return { a: figures('a'), b: figures('b') }
}

// The baseline runs the device's code as the device builds it (bench/lib/bundled-engine.ts).
const { InferenceEngine } = await loadBundledEngine()
const engine = new InferenceEngine({
  projectRoot: root, intraOpThreads: 2,
  limits: { maxEncodedImageBytes: 32 * 1024 * 1024, maxImagePixels: 64_000_000 },
})
await engine.load('bench', 'face-detection')
const rawPipeline: Run = async () => {
  const outcome = await engine.detect({ handle: 'bench', image: { kind: 'bytes', bytes: image } })
  if (!outcome.overlayJpeg) throw new Error('no overlay')
  return outcome.result.areaList.flatMap((a) => a.targetList).length
}

const device = await startBenchDevice({ INFERENCE_THREADS: '2' })
const stageMs = { upload: [] as number[], detect: [] as number[] }
let result
let closeClient = () => {}
try {
  const client = new BenchClient(device.url, { mtk: await device.signIn() })
  closeClient = () => client.close()
  const created = await client.postJson('/gtw/cwai/aihost/PTaskCreate', { taskId: 'bench', algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) })
  if (created.body.resCode !== 1) throw new Error(JSON.stringify(created.body))
  const uploadImage = async () => {
    const fields = { purpose: 'image', chunkIndex: 0, totalChunks: 1, totalSize: image.length, chunkSize: image.length, clientRequestId: randomUUID() }
    const { body } = await client.postMultipart('/gtw/cwai/atomic/model/uploadTemp', fields, { name: 'sample1.jpg', bytes: image })
    if (body.resCode !== 1) throw new Error(JSON.stringify(body))
    return body.resData.uploadId as string
  }
  const httpFlow: Run = async () => {
    let started = performance.now()
    const uploadId = await uploadImage()
    if (sequentialPhase) stageMs.upload.push(performance.now() - started)
    started = performance.now()
    const response = await client.postJson('/gtw/cwai/aihost/PTaskDetectPic', { taskId: 'bench', algorithmCode: 'face-detection', uploadId })
    if (sequentialPhase) stageMs.detect.push(performance.now() - started)
    if (response.body.resCode !== 1) throw new Error(JSON.stringify(response.body))
    if (!String(response.body.resData.fullPicture).startsWith('data:image/jpeg;base64,')) throw new Error('no fullPicture')
    return response.body.resData.areaList.flatMap((a: { targetList: unknown[] }) => a.targetList).length
  }
  result = await compare(rawPipeline, httpFlow)
} finally {
  closeClient()
  await device.stop()
  await engine.close()
}

const raw = 'raw pipeline in process (decode, preprocess, session.run, postprocess, overlay, JPEG)'
const file = await writeReport({
  benchmark: 'detect',
  description: 'sample1.jpg through the face algorithm: full HTTP flow (uploadTemp + PTaskDetectPic by uploadId) vs the raw pipeline in process, interleaved in one run',
  settings: {
    image: 'sample1.jpg (1920x1280, 3 faces)',
    algorithm: 'face-detection',
    sequentialRequestsEach: SEQUENTIAL,
    concurrentRequestsEach: ROUND * ROUNDS,
    clients: CLIENTS,
    httpClient: 'node:http keep-alive, multipart body built once per upload (bench/lib/http-client.ts)',
    rawInProcess: result.a,
    httpFlow: result.b,
    httpStageMedianMsOneClient: { uploadTemp: round1(percentile(stageMs.upload, 50)), PTaskDetectPic: round1(percentile(stageMs.detect, 50)) },
    loadAverageAtStart,
    loadAverageAtEnd: os.loadavg().map((v) => +v.toFixed(2)),
  },
  figures: [
    figure({ name: 'p50 latency, one client', unit: 'ms', value: result.b.p50Ms, baseline: { name: raw, value: result.a.p50Ms }, target: { ratioAtMost: 1.2 } }),
    figure({ name: 'throughput, 4 concurrent clients', unit: 'req/s', value: result.b.throughput4ClientsPerSec, baseline: { name: raw, value: result.a.throughput4ClientsPerSec }, target: { ratioAtLeast: 0.9 } }),
  ],
})
console.log(readFileSync(file, 'utf8'))
