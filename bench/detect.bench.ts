/**
 * Detection speed: sample1.jpg (1920×1280, 3 faces) through the face algorithm.
 *
 *   (a) raw pipeline in process — decode, preprocess, session.run, postprocess, overlay and
 *       JPEG encode (InferenceEngine, no socket, no HTTP);
 *   (b) the full HTTP flow of the device (runtime + sidecar): uploadTemp of the image (one
 *       chunk) then PTaskDetectPic with its uploadId; result with fullPicture as data: URL.
 *
 * Both measured in this run: p50/p90 latency of one client, and throughput of 4 concurrent
 * clients. Targets (issue 4): (b) p50 ≤ 1.2 × (a) p50; (b) 4-client throughput ≥ 0.9 × (a).
 * Run: `npm run bench -- detect` → bench/out/detect.json (contract: bench/lib/report.ts).
 */
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { InferenceEngine } from '../runtime/sidecar/engine.ts'
import { startDevice } from '../test/helpers/device.ts'
import { figure, writeReport } from './lib/report.ts'

const root = path.resolve(import.meta.dirname, '..')
const image = readFileSync(path.join(root, 'node_modules/@vladmandic/face-api/demo/sample1.jpg'))
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 30)
const CONCURRENT_TOTAL = Number(process.env.BENCH_CONCURRENT_TOTAL ?? 40)
const CLIENTS = 4
const WARMUP = 3

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

async function measure(name: string, once: () => Promise<number>) {
  for (let i = 0; i < WARMUP; i++) await once()
  const latencies: number[] = []
  for (let i = 0; i < SEQUENTIAL; i++) {
    const started = performance.now()
    const faces = await once()
    latencies.push(performance.now() - started)
    if (faces !== 3) throw new Error(`${name}: expected 3 faces, got ${faces}`)
  }
  let next = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (next++ < CONCURRENT_TOTAL) await once()
  }))
  const seconds = (performance.now() - started) / 1000
  const figures = {
    p50Ms: +percentile(latencies, 50).toFixed(1),
    p90Ms: +percentile(latencies, 90).toFixed(1),
    meanMs: +(latencies.reduce((s, v) => s + v, 0) / latencies.length).toFixed(1),
    throughput4ClientsPerSec: +(CONCURRENT_TOTAL / seconds).toFixed(2),
  }
  console.log(name, figures)
  return figures
}

// (a) in process
const engine = new InferenceEngine({
  projectRoot: root, intraOpThreads: 2,
  limits: { maxEncodedImageBytes: 32 * 1024 * 1024, maxImagePixels: 64_000_000 },
})
await engine.load('bench', 'face-detection')
const raw = await measure('(a) raw pipeline in process', async () => {
  const outcome = await engine.detect({ handle: 'bench', image: { kind: 'bytes', bytes: image } })
  if (!outcome.overlayJpeg) throw new Error('no overlay')
  return outcome.result.areaList.flatMap((a) => a.targetList).length
})
await engine.close()

// (b) full HTTP flow
const stageMs = { upload: [] as number[], detect: [] as number[] }
const device = await startDevice({ env: { INFERENCE_THREADS: '2' } })
let http
try {
  const mtk = await device.adminToken()
  const created = await device.post('/gtw/cwai/aihost/PTaskCreate', { taskId: 'bench', algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) }, mtk)
  if (created.body.resCode !== 1) throw new Error(JSON.stringify(created.body))
  const uploadImage = async () => {
    const form = new FormData()
    const fields = { purpose: 'image', chunkIndex: 0, totalChunks: 1, totalSize: image.length, chunkSize: image.length, clientRequestId: randomUUID() }
    for (const [name, value] of Object.entries(fields)) form.append(name, String(value))
    form.append('file', new Blob([new Uint8Array(image)]), 'sample1.jpg')
    const response = await fetch(`${device.url}/gtw/cwai/atomic/model/uploadTemp`, { method: 'POST', headers: { mtk }, body: form })
    const body = await response.json() as { resCode: number; resData: { uploadId: string } }
    if (body.resCode !== 1) throw new Error(JSON.stringify(body))
    return body.resData.uploadId
  }
  http = await measure('(b) HTTP uploadTemp + PTaskDetectPic', async () => {
    let started = performance.now()
    const uploadId = await uploadImage()
    stageMs.upload.push(performance.now() - started)
    started = performance.now()
    const response = await device.post('/gtw/cwai/aihost/PTaskDetectPic', { taskId: 'bench', algorithmCode: 'face-detection', uploadId }, mtk)
    stageMs.detect.push(performance.now() - started)
    if (response.body.resCode !== 1) throw new Error(JSON.stringify(response.body))
    if (!String(response.body.resData.fullPicture).startsWith('data:image/jpeg;base64,')) throw new Error('no fullPicture')
    return response.body.resData.areaList.flatMap((a: { targetList: unknown[] }) => a.targetList).length
  })
} finally {
  await device.stop()
  device.cleanup()
}

const baselineName = '(a) raw pipeline in process'
const file = await writeReport({
  benchmark: 'detect',
  description: 'Face detection on sample1.jpg: full HTTP flow (uploadTemp + PTaskDetectPic) vs the raw pipeline in process',
  settings: {
    image: 'sample1.jpg (1920x1280, 3 faces)',
    algorithm: 'face-detection',
    imageSource: 'uploadTemp (1 chunk) + PTaskDetectPic uploadId',
    sequentialRequests: SEQUENTIAL,
    concurrentRequests: CONCURRENT_TOTAL,
    clients: CLIENTS,
  },
  figures: [
    // Targets (issue 4): (b) p50 ≤ 1.2 × (a) p50; (b) 4-client throughput ≥ 0.9 × (a).
    figure({ name: 'latency p50', unit: 'ms', value: http.p50Ms, baseline: { name: baselineName, value: raw.p50Ms }, target: { ratioAtMost: 1.2 } }),
    figure({ name: 'throughput, 4 clients', unit: 'req/s', value: http.throughput4ClientsPerSec, baseline: { name: baselineName, value: raw.throughput4ClientsPerSec }, target: { ratioAtLeast: 0.9 } }),
  ],
  details: {
    a_rawInProcess: raw,
    b_httpFlow: http,
    b_stageMedianMs: { uploadTemp: +percentile(stageMs.upload, 50).toFixed(1), PTaskDetectPic: +percentile(stageMs.detect, 50).toFixed(1) },
    loadAverageAtEnd: os.loadavg().map((v) => +v.toFixed(2)),
  },
})
console.log(`wrote ${file}`)
