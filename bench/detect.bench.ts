/**
 * Detection speed: sample1.jpg (1920×1280, 3 faces) through the face algorithm.
 *
 *   (a) raw pipeline in process — decode, preprocess, session.run, postprocess, overlay and
 *       JPEG encode (InferenceEngine, no socket, no HTTP);
 *   (b) the full HTTP flow of the device (runtime + sidecar): uploadTemp of the image (one
 *       chunk) then PTaskDetectPic with its uploadId; result with fullPicture as data: URL.
 *
 * Both are measured in the same run and interleaved (a, b, a, b, …; throughput in
 * alternating rounds) so that the load of a shared machine affects both alike, after a warm-up
 * of each. (b)'s 4 throughput clients run in a process of their own (bench/lib/load-process.ts).
 * Figures: p50 / p90 latency of one client, throughput of 4 concurrent clients, and the
 * medians of (b)'s two HTTP steps. Targets: (b) p50 ≤ 1.2 × (a) p50; (b) 4-client
 * throughput ≥ 0.9 × (a).
 * Run: `npm run bench -- detect` (or `node build.mjs && npx tsx bench/detect.bench.ts`)
 * → bench/out/detect.json.
 */
import { readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { loadBundledEngine } from './lib/bundled-engine.ts'
import { stealMeter } from './lib/machine.ts'
import { startBenchDevice } from './lib/device-process.ts'
import { detectFlow } from './lib/detect-flow.ts'
import { BenchClient } from './lib/http-client.ts'
import { startLoadProcess } from './lib/load-process.ts'
import { figure, writeReport } from './lib/report.ts'

const root = path.resolve(import.meta.dirname, '..')
const imagePath = path.join(root, 'node_modules/@vladmandic/face-api/demo/sample1.jpg')
const image = readFileSync(imagePath)
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 30)
const ROUND = Number(process.env.BENCH_ROUND ?? 20)
/** Alternating throughput rounds of each path: on a shared 2-core VM one round's ratio varies by ±15 %. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8)
const CLIENTS = 4
/**
 * Unmeasured requests of each path first. A device serves for days; for its first few dozen
 * requests V8 is still compiling the request path (TurboFan, on the same two cores), which is
 * start-up cost, not the cost of a request.
 */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 20)

const loadAverageAtStart = os.loadavg().map((v) => +v.toFixed(2))
const steal = stealMeter()

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}
const round1 = (v: number) => +v.toFixed(1)

type Run = () => Promise<number>
/** Stage times of (b) are recorded in the one-client phase only. */
let sequentialPhase = true

/** (a)'s throughput phase: `total` runs from `CLIENTS` concurrent callers; elapsed seconds. */
async function concurrent(run: Run, total: number): Promise<number> {
  let next = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: CLIENTS }, async () => { while (next++ < total) await run() }))
  return (performance.now() - started) / 1000
}

/** (b)'s throughput phase: `total` flows from `CLIENTS` clients in the load process; elapsed seconds. */
type Concurrent = (total: number) => Promise<number>

async function compare(a: Run, b: Run, bConcurrent: Concurrent) {
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
  const roundRatios: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    const ta = await concurrent(a, ROUND), tb = await bConcurrent(ROUND)
    seconds.a += ta
    seconds.b += tb
    roundRatios.push(+(ta / tb).toFixed(3))
  }
  const figures = (key: 'a' | 'b') => ({
    p50Ms: round1(percentile(lat[key], 50)),
    p90Ms: round1(percentile(lat[key], 90)),
    meanMs: round1(lat[key].reduce((s, v) => s + v, 0) / lat[key].length),
    throughput4ClientsPerSec: +((ROUND * ROUNDS) / seconds[key]).toFixed(2),
  })
  return { a: figures('a'), b: figures('b'), roundRatios }
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
let closeClients = async () => {}
try {
  const mtk = await device.signIn()
  const client = new BenchClient(device.url, { mtk })
  const target = { image, taskId: 'bench', algorithmCode: 'face-detection' }
  const created = await client.postJson('/gtw/cwai/aihost/PTaskCreate', { taskId: target.taskId, algorithmCode: target.algorithmCode, algorithmUpdateTime: String(Date.now()) })
  if (created.body.resCode !== 1) throw new Error(JSON.stringify(created.body))
  const load = await startLoadProcess({ url: device.url, mtk, imagePath, taskId: target.taskId, algorithmCode: target.algorithmCode })
  closeClients = async () => { client.close(); await load.stop() }
  const httpFlow: Run = () => detectFlow(client, target, (stage, ms) => { if (sequentialPhase) stageMs[stage].push(ms) })
  result = await compare(rawPipeline, httpFlow, (total) => load.run(total, CLIENTS, 3))
} finally {
  await closeClients()
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
    warmupRequestsEach: WARMUP,
    sequentialRequestsEach: SEQUENTIAL,
    concurrentRequestsEach: ROUND * ROUNDS,
    clients: CLIENTS,
    httpClient: 'node:http keep-alive, multipart body built once per upload (bench/lib/http-client.ts); the 4 throughput clients run in a process of their own (bench/lib/load-process.ts)',
    rawInProcess: result.a,
    httpFlow: result.b,
    throughputRatioPerRound: result.roundRatios,
    httpStageMedianMsOneClient: { uploadTemp: round1(percentile(stageMs.upload, 50)), PTaskDetectPic: round1(percentile(stageMs.detect, 50)) },
    loadAverageAtStart,
    loadAverageAtEnd: os.loadavg().map((v) => +v.toFixed(2)),
    cpuStealPercent: steal.percent(),
  },
  figures: [
    figure({ name: 'p50 latency, one client', unit: 'ms', value: result.b.p50Ms, baseline: { name: raw, value: result.a.p50Ms }, target: { ratioAtMost: 1.2 } }),
    figure({ name: 'throughput, 4 concurrent clients', unit: 'req/s', value: result.b.throughput4ClientsPerSec, baseline: { name: raw, value: result.a.throughput4ClientsPerSec }, target: { ratioAtLeast: 0.9 } }),
  ],
})
console.log(readFileSync(file, 'utf8'))
