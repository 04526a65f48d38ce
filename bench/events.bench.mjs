// Event throughput and delivery latency: producer (ctx.events.emit in the runtime) → WebSocket
// client, and → mosquitto → MQTT subscriber. Baseline measured in the same run: a plain MQTT
// client publishing QoS 1 straight to the same broker at the same rate (what the broker and
// client libraries cost without the device).
//
//   npm run bench -- events     (or: node build.mjs && node --import tsx bench/events.bench.mjs [--rate 2000] [--seconds 10])
//
// Needs `mosquitto` on PATH. Writes bench/out/events.json. Each receiving client runs in its
// own worker thread (as it would in another process), so they do not share the runtime's
// event loop; receive times are absolute (timeOrigin + now) and comparable across threads.
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { loadavg, tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import mqtt from 'mqtt'
import { figure, writeReport } from './lib/report.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : Number(process.argv[i + 1])
}
const RATE = arg('rate', 2000)
const SECONDS = arg('seconds', 10)
const TOTAL = RATE * SECONDS
const now = () => performance.timeOrigin + performance.now()
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function freePort() {
  const server = createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

async function startBroker(dir) {
  const port = await freePort()
  const conf = path.join(dir, 'mosquitto.conf')
  writeFileSync(conf, `listener ${port} 127.0.0.1\nallow_anonymous true\nmax_inflight_messages 0\nmax_queued_messages 0\nlog_dest none\n`)
  const child = spawn('mosquitto', ['-c', conf], { stdio: 'ignore' })
  for (let i = 0; i < 100; i++) {
    try {
      const c = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { reconnectPeriod: 0 })
      await c.endAsync()
      return { url: `mqtt://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') }
    } catch {
      await sleep(50)
    }
  }
  throw new Error('mosquitto did not start')
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
function summarize(name, sentAt, receivedAt) {
  const latencies = []
  let first = Infinity
  let last = 0
  for (const [seq, at] of receivedAt) {
    latencies.push(at - sentAt[seq])
    first = Math.min(first, sentAt[seq])
    last = Math.max(last, at)
  }
  latencies.sort((a, b) => a - b)
  const round = (x) => Math.round(x * 100) / 100
  return {
    channel: name,
    sent: sentAt.length,
    received: receivedAt.size,
    lost: sentAt.length - receivedAt.size,
    eventsPerSecond: round(receivedAt.size / ((last - first) / 1000)),
    latencyMs: { p50: round(percentile(latencies, 50)), p90: round(percentile(latencies, 90)), p99: round(percentile(latencies, 99)), max: round(latencies[latencies.length - 1]) },
  }
}

const WARMUP = RATE * 2

/**
 * Calls `produce(seq)` at RATE per second, paced on elapsed time: first WARMUP events with
 * negative numbers (JIT, connections, caches), then TOTAL measured ones.
 */
async function paced(produce) {
  const sentAt = []
  const start = now()
  let seq = -WARMUP
  while (seq < TOTAL) {
    const due = Math.min(TOTAL, Math.floor(((now() - start) / 1000) * RATE) - WARMUP)
    const batch = []
    while (seq < due) {
      if (seq >= 0) sentAt[seq] = now()
      batch.push(produce(seq))
      seq++
    }
    await Promise.all(batch)
    await sleep(5)
  }
  return sentAt
}

/** One worker thread per receiving client, as separate processes would be. */
function receivers() {
  const workers = new Map()
  const ask = (worker, message, type, match = () => true) => new Promise((resolve) => {
    const listener = (reply) => {
      if (reply.type !== type || !match(reply)) return
      worker.off('message', listener)
      resolve(reply)
    }
    worker.on('message', listener)
    worker.postMessage(message)
  })
  return {
    add(message) {
      const worker = new Worker(path.join(path.dirname(fileURLToPath(import.meta.url)), 'lib', 'event-receiver.mjs'))
      workers.set(message.name, worker)
      return ask(worker, message, 'ready', (r) => r.name === message.name)
    },
    async waitAll(names, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs
      while (Date.now() < deadline) {
        const counts = await Promise.all(names.map(async (n) => (await ask(workers.get(n), { type: 'count' }, 'count')).counts[n] ?? 0))
        if (counts.every((c) => c >= TOTAL)) return
        await sleep(100)
      }
    },
    async collect(name) {
      const { seen } = await ask(workers.get(name), { type: 'collect' }, 'collect')
      return new Map(seen[name] ?? [])
    },
    stop: () => Promise.all([...workers.values()].map((w) => w.terminate())),
  }
}

async function main() {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-events-'))
  const broker = await startBroker(dir)
  const results = {}
  try {
    const threads = receivers()
    // ── baseline: a plain MQTT publisher → the same broker → subscriber ──────────────
    {
      await threads.add({ type: 'mqtt', name: 'baseline', url: broker.url, clientId: 'bench-base-sub', topic: 'baseline/#' })
      const pub = await mqtt.connectAsync(broker.url, { clientId: 'bench-base-pub' })
      const sentAt = await paced((seq) => pub.publishAsync('baseline/event', JSON.stringify({ seq, payload: { in: seq } }), { qos: 1 }))
      await threads.waitAll(['baseline'])
      results.baselineMqttDirect = summarize('mqtt direct (baseline)', sentAt, await threads.collect('baseline'))
      await pub.endAsync()
    }

    // ── the device: ctx.events.emit → outbox → WebSocket and MQTT ─────────────────────
    Object.assign(process.env, {
      PORT: '0', HOST: '127.0.0.1', WS_PORT: '0', WS_HOST: '127.0.0.1', DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'warn',
      INITIAL_ADMIN_PASSWORD: 'bench-Passw0rd', INITIAL_PASSWORD_CHANGE_REQUIRED: 'false',
      MQTT_URL: broker.url, MQTT_CLIENT_ID: 'bench-device', EVENT_POLL_MS: '500',
    })
    const { startDevice } = await import(pathToFileURL(path.join(root, 'dist/runtime/server.mjs')).href)
    const device = await startDevice()
    const md5 = createHash('md5').update('bench-Passw0rd').digest('hex')
    const login = await (await fetch(`http://127.0.0.1:${device.port}/gtw/cwai/login/DoLogin`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ account: 'admin', pwd: md5 }) })).json()
    await threads.add({ type: 'websocket', name: 'websocket', url: `ws://127.0.0.1:${device.wsPort}/?kinds=passengerFlow.counted`, mtk: login.resData.mtk })
    await threads.add({ type: 'mqtt', name: 'mqtt', url: broker.url, clientId: 'bench-device-sub', topic: 'cwai/bench-device/event/passengerFlow.counted' })
    while ((await device.services.events.settings.status()).mqtt.state !== 'registered') await sleep(50)

    const sentAt = await paced((seq) => device.services.events.emit('passengerFlow.counted', { taskId: 'bench', cameraId: null, in: seq, out: 0 }))
    await threads.waitAll(['websocket', 'mqtt'])
    results.deviceWebSocket = summarize('device → websocket', sentAt, await threads.collect('websocket'))
    results.deviceMqtt = summarize('device → mosquitto → subscriber', sentAt, await threads.collect('mqtt'))
    await threads.stop()
    await device.stop('bench')
  } finally {
    broker.stop()
    rmSync(dir, { recursive: true, force: true })
  }

  // Figures in the contract of bench/lib/report.ts: throughput against the plain MQTT
  // client measured in this run; p99 latency against the delivery gate (100 ms).
  const gate = { minEventsPerSecond: 2000, maxP99LatencyMs: 100 }
  const base = results.baselineMqttDirect
  const figures = [
    ['websocket', results.deviceWebSocket],
    ['mqtt', results.deviceMqtt],
  ].flatMap(([channel, r]) => [
    figure({ name: `${channel} throughput`, unit: 'events/s', value: r.eventsPerSecond, baseline: { name: 'plain MQTT client → same broker, same rate', value: base.eventsPerSecond }, target: { ratioAtLeast: 0.95 } }),
    figure({ name: `${channel} p99 delivery latency`, unit: 'ms', value: r.latencyMs.p99, baseline: { name: 'delivery gate (p99 < 100 ms)', value: gate.maxP99LatencyMs }, target: { ratioAtMost: 1 } }),
  ])
  const file = await writeReport({
    benchmark: 'events',
    description: 'Events from ctx.events.emit to a WebSocket client and through mosquitto to an MQTT subscriber, paced at a fixed rate',
    settings: {
      targetRate: RATE, seconds: SECONDS, warmupEvents: WARMUP, gate,
      loadAverageAtEnd: loadavg().map((x) => Math.round(x * 100) / 100),
      lost: { websocket: results.deviceWebSocket.lost, mqtt: results.deviceMqtt.lost },
      results,
    },
    figures,
  })
  console.log(JSON.stringify({ file, figures: figures.map((f) => [f.name, f.value, f.unit, f.pass]) }, null, 2))
  // A missed target is a reported figure (pass: false), not a crash (bench/README.md).
  process.exit(0)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
