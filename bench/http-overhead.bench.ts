/**
 * HTTP overhead: the device runtime's authenticated small JSON route against a bare hono
 * route on @hono/node-server, same machine, same run, same load generator (autocannon,
 * bounded by time, loopback only). The bare route answers the device route's own response
 * body, so the difference is what the runtime adds: request id, body limit, mtk lookup,
 * input validation, handler dispatch, envelope, access log.
 *
 * Rounds alternate bare/device so drift on the shared 2-core machine hits both alike; each
 * figure is the median over rounds. Settings: BENCH_HTTP_ROUTE, BENCH_HTTP_CONNECTIONS,
 * BENCH_HTTP_SECONDS, BENCH_HTTP_ROUNDS.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { firstJsonLine, spawnChild } from './lib/child-process.ts'
import { startBenchDevice } from './lib/device-process.ts'
import { loadRoute, type LoadResult } from './lib/http-load.ts'
import { BENCH_DIR, figure, writeReport } from './lib/report.ts'

const route = process.env.BENCH_HTTP_ROUTE ?? '/v1/cwai/aihost/ViewRoutes'
const settings = {
  connections: Number(process.env.BENCH_HTTP_CONNECTIONS ?? 10),
  durationSeconds: Number(process.env.BENCH_HTTP_SECONDS ?? 5),
}
const rounds = Number(process.env.BENCH_HTTP_ROUNDS ?? 3)
const requestBody = '{}'

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const device = await startBenchDevice()
const scratch = await mkdtemp(path.join(tmpdir(), 'bench-http-'))
let bare: ReturnType<typeof spawnChild> | null = null
try {
  const mtk = await device.signIn()
  const deviceUrl = device.url + route
  const sample = await fetch(deviceUrl, { method: 'POST', headers: { 'content-type': 'application/json', mtk }, body: requestBody })
  const payload = await sample.text()
  const parsed = JSON.parse(payload) as { resCode: number }
  if (sample.status !== 200 || parsed.resCode !== 1) throw new Error(`${route} did not succeed: ${sample.status} ${payload}`)
  const payloadFile = path.join(scratch, 'payload.json')
  await writeFile(payloadFile, payload)

  bare = spawnChild(process.execPath, ['--import', 'tsx', path.join(BENCH_DIR, 'lib/bare-hono-server.ts'), route, payloadFile], { stdio: ['ignore', 'pipe', 'pipe'] })
  const { port } = await firstJsonLine(bare.process, (v): v is { port: number } => typeof v?.port === 'number', 30_000)
  const bareUrl = `http://127.0.0.1:${port}${route}`

  // Warm both servers (JIT, connection pools, sqlite page cache) before measuring.
  await loadRoute(bareUrl, {}, requestBody, { ...settings, durationSeconds: 1 })
  await loadRoute(deviceUrl, { mtk }, requestBody, { ...settings, durationSeconds: 1 })

  const bareRuns: LoadResult[] = []
  const deviceRuns: LoadResult[] = []
  for (let i = 0; i < rounds; i++) {
    bareRuns.push(await loadRoute(bareUrl, {}, requestBody, settings))
    deviceRuns.push(await loadRoute(deviceUrl, { mtk }, requestBody, settings))
    console.log(`round ${i + 1}: bare ${bareRuns[i]!.requestsPerSecond.toFixed(0)} req/s, device ${deviceRuns[i]!.requestsPerSecond.toFixed(0)} req/s`)
  }
  const pick = (runs: LoadResult[], key: keyof LoadResult) => median(runs.map((r) => r[key]))
  const baselineName = 'bare hono route, same payload'

  const file = await writeReport({
    benchmark: 'http-overhead',
    description: `Authenticated device route POST ${route} (mtk) vs a bare hono route answering the same JSON`,
    settings: { route, ...settings, rounds, payloadBytes: Buffer.byteLength(payload), loadGenerator: 'autocannon', statistic: 'median of rounds' },
    figures: [
      // Targets: the runtime's middleware and session lookup may cost at most 4x a bare route.
      figure({ name: 'throughput', unit: 'req/s', value: pick(deviceRuns, 'requestsPerSecond'), baseline: { name: baselineName, value: pick(bareRuns, 'requestsPerSecond') }, target: { ratioAtLeast: 0.25 } }),
      figure({ name: 'latency mean', unit: 'ms', value: pick(deviceRuns, 'latencyMeanMs'), baseline: { name: baselineName, value: pick(bareRuns, 'latencyMeanMs') }, target: { ratioAtMost: 4 } }),
      figure({ name: 'latency p99', unit: 'ms', value: pick(deviceRuns, 'latencyP99Ms'), baseline: { name: baselineName, value: pick(bareRuns, 'latencyP99Ms') }, target: { ratioAtMost: 4 } }),
    ],
  })
  console.log(`wrote ${file}`)
} finally {
  await bare?.stop()
  await device.stop()
  await rm(scratch, { recursive: true, force: true })
}
