/**
 * Model export (spec 4.11): the device's authenticated `exportConfig` streaming a user model
 * against a bare node:http server streaming the same file with fs.createReadStream, same
 * machine, same run, loopback. Figures: whole-file throughput, median latency of small
 * random ranges, and the device's memory growth during whole-file exports (streamed, never
 * buffered: it must stay far below the file size).
 *
 * The model is a real ONNX file (one Add node with a large initializer) built with
 * onnx-proto, imported through `Model/import`, so the device validated it like any model.
 * Rounds alternate bare/device; each figure is the median. Settings: BENCH_EXPORT_MB,
 * BENCH_EXPORT_ROUNDS, BENCH_EXPORT_RANGES.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import onnxProto from 'onnx-proto'
import { firstJsonLine, spawnChild } from './lib/child-process.ts'
import { startBenchDevice } from './lib/device-process.ts'
import { BENCH_DIR, figure, writeReport } from './lib/report.ts'

const megabytes = Number(process.env.BENCH_EXPORT_MB ?? 128)
const rounds = Number(process.env.BENCH_EXPORT_ROUNDS ?? 5)
const rangeCount = Number(process.env.BENCH_EXPORT_RANGES ?? 200)
const RANGE_BYTES = 64 * 1024
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** An ONNX model `y = x + w` whose initializer `w` makes the file about `megabytes` large. */
function bigModel(): Uint8Array {
  const { onnx } = onnxProto
  const n = Math.floor((megabytes * 1024 * 1024) / 4)
  const raw = Buffer.alloc(n * 4)
  for (let i = 0; i < n; i += 1024) raw.writeFloatLE(i % 13, i * 4)
  const vector = { tensorType: { elemType: 1, shape: { dim: [{ dimValue: n }] } } }
  return onnx.ModelProto.encode(onnx.ModelProto.create({
    irVersion: 8, opsetImport: [{ domain: '', version: 13 }], producerName: 'model-export-bench',
    graph: {
      name: 'add', node: [{ opType: 'Add', input: ['x', 'w'], output: ['y'], name: 'add' }],
      initializer: [{ name: 'w', dims: [n], dataType: 1, rawData: raw }],
      input: [{ name: 'x', type: vector }], output: [{ name: 'y', type: vector }],
    },
  })).finish()
}

/** Reads a response to the end without keeping it; returns the byte count. */
async function drain(response: Response): Promise<number> {
  let bytes = 0
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length
  return bytes
}

const device = await startBenchDevice()
let bare: ReturnType<typeof spawnChild> | null = null
try {
  const mtk = await device.signIn()
  const post = (route: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(device.url + route, { method: 'POST', headers: { 'content-type': 'application/json', mtk, ...headers }, body: JSON.stringify(body) })
  const importDir = path.join(device.dataDir, 'import', 'models')
  await mkdir(importDir, { recursive: true })
  const modelBytes = bigModel()
  await writeFile(path.join(importDir, 'big.onnx'), modelBytes)
  const imported = await (await post('/gtw/cwai/atomic/Model/import', { fileName: 'big.onnx' })).json() as { resCode: number; resData: { modelId: string; sizeBytes: string } }
  if (imported.resCode !== 1) throw new Error(`import failed: ${JSON.stringify(imported)}`)
  const { modelId } = imported.resData
  const size = Number(imported.resData.sizeBytes)
  const storedFile = path.join(device.dataDir, 'models', `${modelId}.onnx`)

  bare = spawnChild(process.execPath, ['--import', 'tsx', path.join(BENCH_DIR, 'lib/bare-file-server.ts'), storedFile], { stdio: ['ignore', 'pipe', 'pipe'] })
  const { port } = await firstJsonLine(bare.process, (v): v is { port: number } => typeof v?.port === 'number', 30_000)
  const bareGet = (headers: Record<string, string> = {}) => fetch(`http://127.0.0.1:${port}/`, { headers })
  const deviceExport = (headers: Record<string, string> = {}) => post('/gtw/cwai/atomic/model/exportConfig', { modelId }, headers)
  const runtimeRss = async () => ((await (await post('/v1/cwai/aihost/QueryDeviceMemStatus', {})).json()) as { resData: { runtime: { rssBytes: number } } }).resData.runtime.rssBytes

  const wholeFile = async (get: () => Promise<Response>) => {
    const started = performance.now()
    const bytes = await drain(await get())
    if (bytes !== size) throw new Error(`read ${bytes} of ${size} bytes`)
    return size / (1024 * 1024) / ((performance.now() - started) / 1000)
  }
  // The same pseudo-random ranges for both servers.
  const ranges = Array.from({ length: rangeCount }, (_, i) => {
    const start = Math.floor(((i * 2654435761) % 1_000_003) / 1_000_003 * (size - RANGE_BYTES))
    return `bytes=${start}-${start + RANGE_BYTES - 1}`
  })
  const rangeLatency = async (get: (h: Record<string, string>) => Promise<Response>) => {
    const times: number[] = []
    for (const range of ranges) {
      const started = performance.now()
      const response = await get({ range })
      if (response.status !== 206 || (await drain(response)) !== RANGE_BYTES) throw new Error(`range ${range} failed: ${response.status}`)
      times.push(performance.now() - started)
    }
    return median(times)
  }

  // Warm both (page cache, JIT).
  await wholeFile(() => bareGet())
  await wholeFile(() => deviceExport())
  const rssBefore = await runtimeRss()
  const bareMBs: number[] = []
  const deviceMBs: number[] = []
  const bareMs: number[] = []
  const deviceMs: number[] = []
  let rssPeak = rssBefore
  for (let i = 0; i < rounds; i++) {
    bareMBs.push(await wholeFile(() => bareGet()))
    deviceMBs.push(await wholeFile(() => deviceExport()))
    rssPeak = Math.max(rssPeak, await runtimeRss())
    bareMs.push(await rangeLatency(bareGet))
    deviceMs.push(await rangeLatency(deviceExport))
    console.log(`round ${i + 1}: whole file bare ${bareMBs[i]!.toFixed(0)} MB/s, device ${deviceMBs[i]!.toFixed(0)} MB/s; 64 KB range bare ${bareMs[i]!.toFixed(2)} ms, device ${deviceMs[i]!.toFixed(2)} ms`)
  }
  const rssGrowthMB = Math.max(0, rssPeak - rssBefore) / (1024 * 1024)
  const file = await writeReport({
    benchmark: 'model-export',
    description: 'exportConfig streaming a user model (whole file and 64 KB ranges) vs a bare node:http fs.createReadStream server on the same file',
    settings: { fileBytes: size, rounds, ranges: rangeCount, rangeBytes: RANGE_BYTES },
    figures: [
      figure({ name: 'whole-file throughput', unit: 'MB/s', value: median(deviceMBs), baseline: { name: 'bare fs.createReadStream server', value: median(bareMBs) }, target: { ratioAtLeast: 0.5 } }),
      // The device also checks the mtk, validates the body and looks the model up per request.
      figure({ name: '64 KB range median latency', unit: 'ms', value: median(deviceMs), baseline: { name: 'bare fs.createReadStream server', value: median(bareMs) }, target: { ratioAtMost: 6 } }),
      // Streamed, not buffered: the runtime's resident memory grows by far less than the file.
      figure({ name: 'runtime RSS growth during exports', unit: 'MB', value: rssGrowthMB, baseline: { name: 'file size', value: size / (1024 * 1024) }, target: { ratioAtMost: 0.25 } }),
    ],
  })
  console.log(`wrote ${file}`)
} finally {
  await bare?.stop()
  await device.stop()
}
