import { createHash, randomUUID } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { md5Hex } from '../../shared/auth/password.ts'
import { scratchDirOf } from '../../shared/http/produced-file.ts'
import { spoolDirOf } from '../../runtime/uploads/spool.ts'
import { startDevice, type DeviceProcess } from '../../test/helpers/device.ts'
import { startBroker, type Broker } from '../../test/helpers/mosquitto.ts'
import { recordTopics, type Recorder } from '../../test/helpers/mqtt-client.ts'
import { startReceiver, type Receiver } from '../../test/helpers/webhook-receiver.ts'
import { zipOf } from '../../test/helpers/zip.ts'
import { samplePath } from '../../test/inference/helpers.ts'
import { ROOT, alive, envelopeViolation, processesMentioning, send, sleep, waitUntil } from './lib.ts'

const IMAGE = readFileSync(samplePath(1))
const IMAGE_BASE64 = IMAGE.toString('base64')
const UPLOAD_CHUNKS = 4
const DETECT_TASK = 'reliability-detect'

/** A seeded generator, so that a run's random fault points can be replayed with `--seed`. */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** What the device acknowledged: after any fault it must all still be there (nothing lost). */
interface Ledger {
  /** clientRequestId → completed uploadId (null while open). */
  uploads: Map<string, string | null>
  tasks: Set<string>
  algorithms: Set<string>
  /** algorithmId → its package (the same bytes when the upload is sent again). */
  packages: Map<string, Buffer>
  /** Webhook timeoutMs values acknowledged, and those in flight when a fault hit (either may stick). */
  settings: { acknowledged: number | null; inFlight: Set<number> }
  /** Accounts whose failed sign-in (a `login.locked` event, LOGIN_MAX_FAILURES=1) was answered. */
  eventAccounts: Set<string>
}

export interface FaultRecord {
  target: string
  signal: string
  afterMs: number
  recoveredMs: number | null
  workloads: Record<string, string>
}

export interface FaultFigures {
  injected: number
  recoveries: number
  /** Duration of the work without a fault (the range of the fault points). */
  workSpanMs: number
  faults: FaultRecord[]
  lost: string[]
  leaks: string[]
  /** Answers without the envelope, or 5xx beyond the catalogue's transient ones. */
  violations: string[]
  ledger: { uploads: number; tasks: number; algorithms: number; events: number }
  eventDeliveries: { webhook: { events: number; deliveries: number; duplicated: number }; mqtt: { events: number; messages: number; duplicated: number } }
  fullDisk: Record<string, unknown> | null
  skipped: string[]
  durationMs: number
}

/** A supervised device (npm start's supervisor) with a webhook receiver and an MQTT broker, on one data folder. */
class Rig {
  device!: DeviceProcess
  mtk = ''
  readonly dataDir = mkdtempSync(path.join(tmpdir(), 'reliability-faults-'))
  readonly clientId = `rel-${randomUUID().slice(0, 8)}`
  constructor(readonly receiver: Receiver, readonly broker: Broker, readonly recorder: Recorder) {}

  get env(): Record<string, string> {
    return {
      LOGIN_MAX_FAILURES: '1', EVENT_POLL_MS: '100', MQTT_URL: this.broker.url, MQTT_CLIENT_ID: this.clientId,
      MQTT_RECONNECT_MIN_MS: '100', MQTT_RECONNECT_MAX_MS: '500', SHUTDOWN_GRACE_MS: '5000',
    }
  }

  async start(): Promise<void> {
    this.device = await startDevice({ entry: 'supervisor', dataDir: this.dataDir, env: this.env })
    this.logs.push(this.device.logs)
    // Sessions live in the database: the mtk outlives restarts. (adminToken tries the initial
    // password first, which with LOGIN_MAX_FAILURES=1 would block this address.)
    if (!this.mtk) this.mtk = await this.device.adminToken()
  }

  serverPid(): number {
    const listening = this.device.logs.filter((l) => l.msg === 'listening')
    return Number(listening.at(-1)?.pid ?? 0)
  }

  async sidecarPid(): Promise<number> {
    const status = await this.post('/gtw/cwai/System/QueryDeviceStatus', {})
    return Number(status.body?.resData?.sidecar?.pid ?? 0)
  }

  target() {
    return { url: this.device.url, mtk: this.mtk, check: this.check.bind(this) }
  }

  /** Every answer, also those cut short by a fault, keeps the envelope and no 5xx beyond the transient ones. */
  readonly violations: string[] = []
  /** The fault under way (names where a violation happened). */
  phase = 'setup'
  /** The log lines of every device process this rig started (a restart makes a new list). */
  private readonly logs: Record<string, unknown>[][] = []
  async post(route: string, body: unknown) {
    const answer = await this.device.post(route, body, this.mtk)
    this.check(route, answer)
    return answer
  }

  check(route: string, answer: { status: number; body: any }): void {
    const problem = envelopeViolation({ ...answer, contentType: '' })
    if (problem) this.violations.push(`${this.phase}: ${route}: ${problem} (cause logged: ${this.causeOf(answer.body?.resMsg?.[0]?.details?.requestId)})`)
  }

  /** What the device logged for the request: its error's code and message. */
  private causeOf(requestId: unknown): string {
    if (typeof requestId !== 'string') return 'no request id'
    const line = this.logs.flat().find((l) => l.requestId === requestId && Number(l.level) >= 50)
    const err = line?.err as { code?: string; message?: string } | undefined
    return err ? `${err.code ?? ''} ${String(err.message).slice(0, 160)}`.trim() : 'not found'
  }

  /** Answers again (Probe), a sidecar other than `killed` runs, and the session still works. */
  async ready(timeoutMs: number, killed: number[] = []): Promise<boolean> {
    return waitUntil(async () => {
      try {
        const probe = await send(`${this.device.url}/v1/cwai/aihost/Probe`, { method: 'GET' }, 2000)
        if (probe.status !== 200) return false
        const status = await this.post('/gtw/cwai/System/QueryDeviceStatus', {})
        const sidecar = status.body?.resData?.sidecar
        return sidecar?.state === 'running' && sidecar.pid > 0 && !killed.includes(sidecar.pid)
      } catch {
        return false
      }
    }, timeoutMs, 250)
  }
}

/** Uploads the sample image in 4 chunks; resumes the session of `clientRequestId` when it exists. */
async function uploadChunks(device: { url: string; mtk: string; check?: Rig['check'] }, clientRequestId: string): Promise<string> {
  const chunkSize = Math.ceil(IMAGE.length / UPLOAD_CHUNKS)
  const sha256 = createHash('sha256').update(IMAGE).digest('hex')
  let uploadId: string | undefined
  // Chunk 0 opens the session or resumes it (spec 3.1); then from the session's next chunk on.
  for (let index = 0; index < UPLOAD_CHUNKS;) {
    const chunk = IMAGE.subarray(index * chunkSize, (index + 1) * chunkSize)
    const form = new FormData()
    const fields = { purpose: 'image', chunkIndex: index, totalChunks: UPLOAD_CHUNKS, totalSize: IMAGE.length, chunkSize: chunk.length, sha256, clientRequestId, uploadId }
    for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.append(name, String(value))
    form.append('file', new Blob([new Uint8Array(chunk)]), 'sample.jpg')
    const answer = await send(`${device.url}/gtw/cwai/atomic/model/uploadTemp`, { headers: { mtk: device.mtk }, body: form }, 30_000)
    device.check?.('uploadTemp', answer)
    if (answer.body?.resCode !== 1) throw new Error(`uploadTemp chunk ${index}: ${JSON.stringify(answer.body).slice(0, 300)}`)
    uploadId = answer.body.resData.uploadId
    if (answer.body.resData.complete) return uploadId!
    index = Math.max(index + 1, Number(answer.body.resData.nextChunkIndex))
    await sleep(50)
  }
  throw new Error('upload not complete after its last chunk')
}

/**
 * Uploads the package of `algorithmId` (one chunk; sent again, the same bytes resume or
 * complete its session, spec 3.1) and installs it. Its id is unique to the round, so
 * AlgorithmExists on a second attempt means the first one went through.
 */
async function install(rig: Rig, ledger: Ledger, algorithmId: string): Promise<void> {
  const zip = ledger.packages.get(algorithmId)!
  const form = new FormData()
  const fields = { purpose: 'algorithm', chunkIndex: 0, totalChunks: 1, totalSize: zip.length, chunkSize: zip.length, clientRequestId: `pkg-${algorithmId}` }
  for (const [name, value] of Object.entries(fields)) form.append(name, String(value))
  form.append('file', new Blob([new Uint8Array(zip)]), `${algorithmId}.zip`)
  const uploaded = await send(`${rig.device.url}/gtw/cwai/atomic/model/uploadTemp`, { headers: { mtk: rig.mtk }, body: form }, 30_000)
  rig.check('uploadTemp', uploaded)
  if (uploaded.body?.resCode !== 1) throw new Error(`package upload: ${JSON.stringify(uploaded.body).slice(0, 200)}`)
  const installed = await rig.post('/gtw/cwai/Algorithm/upload', { uploadId: uploaded.body.resData.uploadId })
  if (installed.body.resCode === 1 || installed.body.resMsg?.[0]?.messageKey === 'api.error.AlgorithmExists') ledger.algorithms.add(algorithmId)
  else throw new Error(`install: ${JSON.stringify(installed.body.resMsg).slice(0, 400)}`)
}

/** Every kind of work at once, each recording in the ledger only what the device acknowledged. */
function workloads(rig: Rig, ledger: Ledger, round: string): Record<string, Promise<unknown>> {
  const clientRequestId = `up-${round}`
  ledger.uploads.set(clientRequestId, null)
  const taskId = `task-${round}`
  const algorithmId = `rel-alg-${round}`
  const timeoutMs = 1000 + Math.floor(Math.random() * 8000)
  ledger.settings.inFlight.add(timeoutMs)
  const manifest = JSON.parse(readFileSync(path.join(ROOT, 'models/manifests/face-detection.json'), 'utf8'))
  return {
    upload: uploadChunks(rig.target(), clientRequestId).then((uploadId) => { ledger.uploads.set(clientRequestId, uploadId) }),
    detect: Promise.all([1, 2, 3].map(() => rig.post('/gtw/cwai/aihost/PTaskDetectPic', { taskId: DETECT_TASK, algorithmCode: 'face-detection', imageBase64: IMAGE_BASE64 }))),
    task: rig.post('/gtw/cwai/aihost/PTaskCreate', { taskId, algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) })
      .then((a) => { if (a.body.resCode === 1) ledger.tasks.add(taskId) }),
    install: (async () => {
      const zip = await zipOf({ 'manifest.json': JSON.stringify({ ...manifest, algorithmId, algorithmName: `Reliability ${round}` }) })
      ledger.packages.set(algorithmId, zip)
      await install(rig, ledger, algorithmId)
    })(),
    settings: rig.post('/gtw/cwai/System/SetHttpParam', { timeoutMs }).then((a) => {
      if (a.body.resCode === 1) {
        ledger.settings.acknowledged = timeoutMs
        ledger.settings.inFlight.clear()
      }
    }),
    events: (async () => {
      for (let i = 0; i < 4; i++) {
        const account = `evt-${round}-${i}`
        const answer = await rig.post('/gtw/cwai/login/DoLogin', { account, pwd: md5Hex('wrong password') })
        if (answer.body?.resMsg?.[0]?.messageKey === 'api.error.LoginFailed') ledger.eventAccounts.add(account)
      }
    })(),
  }
}

/** Waits for the work (bounded) and says how each part ended; a part cut by the fault fails, which is expected. */
function watch(work: Record<string, Promise<unknown>>): (timeoutMs: number) => Promise<Record<string, string>> {
  const outcomes: Record<string, string> = {}
  // Handlers are attached at once: a part may fail before the fault is even injected.
  const all = Promise.all(Object.entries(work).map(([name, p]) => p.then(() => { outcomes[name] = 'done' }, (e: Error) => { outcomes[name] = `failed: ${e.message.slice(0, 400)}` })))
  return async (timeoutMs) => {
    await Promise.race([all, sleep(timeoutMs)])
    for (const name of Object.keys(work)) outcomes[name] ??= 'no answer in time'
    return { ...outcomes }
  }
}

/** Files the device leaves in its scratch and spool folders only while a request runs. */
function leftoverFiles(dataDir: string): string[] {
  return [scratchDirOf(dataDir), spoolDirOf(dataDir)].flatMap((dir) => {
    try { return readdirSync(dir).map((name) => path.join(path.basename(dir), name)) } catch { return [] }
  })
}

export async function runFaults(options: { rounds: number; seed: number; log: (line: string) => void }): Promise<FaultFigures> {
  const started = Date.now()
  const rand = random(options.seed)
  const figures: FaultFigures = {
    injected: 0, recoveries: 0, workSpanMs: 0, faults: [], lost: [], leaks: [], violations: [], ledger: { uploads: 0, tasks: 0, algorithms: 0, events: 0 },
    eventDeliveries: { webhook: { events: 0, deliveries: 0, duplicated: 0 }, mqtt: { events: 0, messages: 0, duplicated: 0 } },
    fullDisk: null,
    skipped: ['wall-clock steps: in the clock part (libfaketime), not during these faults'],
    durationMs: 0,
  }
  const ledger: Ledger = { uploads: new Map(), tasks: new Set(), algorithms: new Set(), packages: new Map(), settings: { acknowledged: null, inFlight: new Set() }, eventAccounts: new Set() }
  const receiver = await startReceiver()
  const broker = await startBroker()
  const recorder = await recordTopics(broker.url, 'cwai/+/event/#', { clientId: `rec-${randomUUID().slice(0, 8)}`, clean: false })
  const rig = new Rig(receiver, broker, recorder)
  const devicePids = new Set<number>()
  try {
    await rig.start()
    const set = await rig.post('/gtw/cwai/System/SetHttpParam', { enabled: true, urls: [receiver.url], maxAttempts: 100, backoffBaseMs: 50, backoffMaxMs: 500 })
    if (set.body.resCode !== 1) throw new Error(`webhook setting refused: ${JSON.stringify(set.body)}`)
    if ((await rig.post('/gtw/cwai/aihost/PTaskCreate', { taskId: DETECT_TASK, algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) })).body.resCode !== 1) throw new Error('detect task not created')
    ledger.tasks.add(DETECT_TASK)

    // How long the work takes here without a fault: fault points are drawn within it.
    const warmUpStarted = Date.now()
    await watch(workloads(rig, ledger, 'warm-up'))(120_000)
    figures.workSpanMs = Date.now() - warmUpStarted

    const targets = ['server', 'supervisor', 'sidecar', 'broker'] as const
    const signals = ['SIGKILL', 'SIGTERM'] as const
    let round = 0
    for (let r = 0; r < options.rounds; r++) {
      for (const target of targets) {
        // The broker is stopped (SIGTERM: mosquitto saves its persistence) and started again after a pause.
        for (const signal of target === 'broker' ? ['SIGTERM' as const] : signals) {
          const name = `${r}-${target}-${signal.toLowerCase()}-${round++}`
          const pids = { supervisor: rig.device.process.pid!, server: rig.serverPid(), sidecar: await rig.sidecarPid() }
          for (const pid of [pids.server, pids.sidecar]) devicePids.add(pid)
          const settle = watch(workloads(rig, ledger, name))
          rig.phase = name
          const afterMs = Math.floor(rand() * figures.workSpanMs)
          await sleep(afterMs)
          const faultAt = Date.now()
          if (target === 'broker') {
            await broker.stop()
            await sleep(500 + rand() * 1500)
            await broker.start()
          } else {
            const pid = pids[target]
            // Never 0 or -1 (process.kill would signal the suite's own group, or everything).
            if (!(pid > 1) || pid === process.pid) throw new Error(`no ${target} pid to signal (${pid})`)
            try { process.kill(pid, signal) } catch { /* already gone */ }
          }
          figures.injected++
          const outcomes = await settle(60_000)
          let recovered = false
          if (target === 'supervisor') {
            // The device and its sidecar end with their supervisor (parent-death handling); a new start follows.
            const gone = await waitUntil(() => !alive(pids.server) && !alive(pids.sidecar), 20_000)
            if (!gone) figures.leaks.push(`${name}: server ${pids.server} or sidecar ${pids.sidecar} still runs after its supervisor got ${signal}`)
            if (signal === 'SIGTERM') await rig.device.stop()
            else await rig.device.kill()
            await rig.start()
            recovered = await rig.ready(60_000, [pids.sidecar])
          } else {
            // The supervisor restarts the server (backoff up to 30 s); the server restarts its sidecar.
            // The sidecar ignores SIGTERM while its runtime is connected (runtime/sidecar/main.ts:
            // a process-group stop must not cut inferences): it keeps serving, no replacement.
            const replaced = target === 'server' || (target === 'sidecar' && signal === 'SIGKILL')
            recovered = await rig.ready(90_000, replaced ? [pids.sidecar] : [])
          }
          const recoveredMs = recovered ? Date.now() - faultAt : null
          if (recovered) figures.recoveries++
          else figures.lost.push(`${name}: the device did not recover`)
          figures.faults.push({ target, signal, afterMs, recoveredMs, workloads: outcomes })
          options.log(`fault ${name} at ${afterMs} ms: ${recovered ? `recovered in ${recoveredMs} ms` : 'NOT recovered'}; ${Object.entries(outcomes).map(([k, v]) => `${k} ${v.split(':')[0]}`).join(', ')}`)
          if (!recovered) throw new Error(`device did not recover from ${name}`)
          await finishWork(rig, ledger, name, figures)
          await checkQuiescent(rig, name, figures)
        }
      }
    }
    await checkLedger(rig, ledger, figures)
    figures.violations.push(...rig.violations)
    const everyPid = [...devicePids, rig.serverPid(), await rig.sidecarPid()]
    await rig.device.stop()
    if (!(await waitUntil(() => everyPid.every((pid) => !alive(pid)), 15_000))) figures.leaks.push(`processes left after stop: ${everyPid.filter(alive).join(', ')}`)
    const mentioning = processesMentioning(rig.dataDir)
    if (mentioning.length) figures.leaks.push(`processes still using ${rig.dataDir} after stop: ${mentioning.join(', ')}`)
    figures.fullDisk = await fullDisk(options.log, figures)
  } catch (error) {
    figures.lost.push(`fault injection aborted: ${(error as Error).stack?.slice(0, 600)}`)
  } finally {
    figures.durationMs = Date.now() - started
    if (rig.device?.process.exitCode === null) await rig.device.kill()
    await recorder.close()
    await broker.cleanup()
    await receiver.close()
    rmSync(rig.dataDir, { recursive: true, force: true })
  }
  figures.ledger = { uploads: ledger.uploads.size, tasks: ledger.tasks.size, algorithms: ledger.algorithms.size, events: ledger.eventAccounts.size }
  return figures
}

/**
 * Interrupted uploads resume (chunk 0 again, same clientRequestId and sha256, spec 3.1) and
 * complete; interrupted installs run again.
 */
async function finishWork(rig: Rig, ledger: Ledger, name: string, figures: FaultFigures): Promise<void> {
  for (const algorithmId of ledger.packages.keys()) {
    if (ledger.algorithms.has(algorithmId)) continue
    await install(rig, ledger, algorithmId).catch((error: Error) => figures.lost.push(`${name}: install of ${algorithmId} failed when run again: ${error.message.slice(0, 300)}`))
  }
  for (const [clientRequestId, uploadId] of ledger.uploads) {
    if (uploadId !== null) continue
    try {
      ledger.uploads.set(clientRequestId, await uploadChunks(rig.target(), clientRequestId))
    } catch (error) {
      figures.lost.push(`${name}: upload ${clientRequestId} could not be resumed: ${(error as Error).message.slice(0, 200)}`)
      ledger.uploads.delete(clientRequestId)
    }
  }
}

/**
 * With nothing in flight and every upload complete: no reserved bytes, no scratch or spool
 * file. (Completed uploads not yet claimed count as active sessions until claimed or expired.)
 */
async function checkQuiescent(rig: Rig, name: string, figures: FaultFigures): Promise<void> {
  const capabilities = async () => (await rig.post('/gtw/cwai/atomic/model/uploadCapabilities', {})).body.resData
  const ok = await waitUntil(async () => (await capabilities()).reservedBySessionsBytes === '0' && leftoverFiles(rig.dataDir).length === 0, 10_000, 250)
  if (!ok) figures.leaks.push(`${name}: reserved ${(await capabilities()).reservedBySessionsBytes} bytes, files ${JSON.stringify(leftoverFiles(rig.dataDir))}`)
}

/** Everything acknowledged is still there; every acknowledged event arrived at least once on both channels. */
async function checkLedger(rig: Rig, ledger: Ledger, figures: FaultFigures): Promise<void> {
  for (const taskId of ledger.tasks) {
    if ((await rig.post('/v1/cwai/aihost/QueryTaskStatus', { taskId })).body.resCode !== 1) figures.lost.push(`task ${taskId}`)
  }
  const algorithms = new Set((await rig.post('/gtw/cwai/algorithm/page', { pageSize: 1000 })).body.resData.rows.map((r: any) => r.algorithmId))
  for (const id of ledger.algorithms) if (!algorithms.has(id)) figures.lost.push(`algorithm ${id}`)
  const http = (await rig.post('/gtw/cwai/System/QueryHttpParam', {})).body.resData
  const allowed = new Set([ledger.settings.acknowledged, ...ledger.settings.inFlight])
  if (ledger.settings.acknowledged !== null && !allowed.has(http.timeoutMs)) figures.lost.push(`webhook timeoutMs is ${http.timeoutMs}, acknowledged ${ledger.settings.acknowledged}`)
  // A completed upload is still claimable: a detection by uploadId consumes it (spec 3.1).
  for (const [clientRequestId, uploadId] of ledger.uploads) {
    if (uploadId === null) continue
    let answer = await rig.post('/gtw/cwai/aihost/PTaskDetectPic', { taskId: DETECT_TASK, algorithmCode: 'face-detection', uploadId })
    for (let i = 0; i < 5 && answer.body.resMsg?.[0]?.retryable; i++) {
      await sleep(1000)
      answer = await rig.post('/gtw/cwai/aihost/PTaskDetectPic', { taskId: DETECT_TASK, algorithmCode: 'face-detection', uploadId })
    }
    if (answer.body.resCode !== 1) figures.lost.push(`upload ${clientRequestId} (${uploadId}) not claimable: ${JSON.stringify(answer.body.resMsg?.[0]?.messageKey)}`)
  }
  // At least once, counted by event id.
  const byAccount = (items: { account: unknown; id: unknown }[]) => {
    const ids = new Map<string, Set<unknown>>()
    for (const { account, id } of items) if (typeof account === 'string') ids.set(account, (ids.get(account) ?? new Set()).add(id))
    return ids
  }
  const webhookOk = () => rig.receiver.deliveries.filter((d) => d.status === 200 && d.body?.kind === 'login.locked')
  const mqttEvents = () => rig.recorder.messages.filter((m) => m.topic.endsWith('/event/login.locked'))
  await waitUntil(() => {
    const w = byAccount(webhookOk().map((d) => ({ account: d.body.payload?.accountName, id: d.body.id })))
    const m = byAccount(mqttEvents().map((x) => ({ account: x.body?.payload?.accountName, id: x.body?.id })))
    return [...ledger.eventAccounts].every((a) => w.has(a) && m.has(a))
  }, 60_000, 500)
  const webhook = webhookOk()
  const mqtt = mqttEvents()
  const w = byAccount(webhook.map((d) => ({ account: d.body.payload?.accountName, id: d.body.id })))
  const m = byAccount(mqtt.map((x) => ({ account: x.body?.payload?.accountName, id: x.body?.id })))
  for (const account of ledger.eventAccounts) {
    if (!w.has(account)) figures.lost.push(`event login.locked of ${account} never reached the webhook`)
    if (!m.has(account)) figures.lost.push(`event login.locked of ${account} never reached MQTT`)
  }
  const count = (ids: unknown[]) => ({ unique: new Set(ids).size, all: ids.length })
  const wc = count(webhook.map((d) => d.body.id))
  const mc = count(mqtt.map((x) => x.body?.id))
  figures.eventDeliveries = {
    webhook: { events: wc.unique, deliveries: wc.all, duplicated: wc.all - wc.unique },
    mqtt: { events: mc.unique, messages: mc.all, duplicated: mc.all - mc.unique },
  }
}

/** Writes zeros into `file` until the filesystem refuses (ENOSPC). */
function fillDisk(file: string): void {
  const fd = openSync(file, 'w')
  try {
    for (const size of [1 << 20, 4096, 1]) {
      try { for (;;) writeSync(fd, Buffer.alloc(size)) } catch (error) { if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error }
    }
  } finally {
    closeSync(fd)
  }
}

/**
 * DATA_DIR on a small tmpfs of its own (mounted as root) that fills up while uploads,
 * detections and events run: the device keeps answering with the envelope, and once space
 * returns it uploads again with no reservation or file left over.
 */
async function fullDisk(log: (line: string) => void, figures: FaultFigures): Promise<Record<string, unknown> | null> {
  if (process.getuid?.() !== 0) {
    figures.skipped.push('full disk: needs root to mount a tmpfs')
    return null
  }
  const mountPoint = mkdtempSync(path.join(tmpdir(), 'reliability-disk-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=48m', 'tmpfs', mountPoint])
  const dataDir = path.join(mountPoint, 'data')
  let device: DeviceProcess | null = null
  const result: Record<string, unknown> = {}
  try {
    // A reserve that fits the small filesystem: uploads work before it fills and after.
    device = await startDevice({ dataDir, env: { LOGIN_MAX_FAILURES: '1', UPLOAD_RESERVE_BYTES: String(2 ** 20) } })
    const mtk = await device.adminToken()
    const taskId = 'disk-task'
    await device.post('/gtw/cwai/aihost/PTaskCreate', { taskId, algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) }, mtk)
    fillDisk(path.join(mountPoint, 'filler'))
    figures.injected++
    const answers: Record<string, number> = {}
    const note = (key: string) => { answers[key] = (answers[key] ?? 0) + 1 }
    const checkAnswer = (route: string, answer: { status: number; body: any }) => {
      const problem = envelopeViolation({ ...answer, contentType: '' })
      if (problem && !figures.violations.some((v) => v.startsWith(`full disk: ${route}`))) figures.violations.push(`full disk: ${route} answered ${problem}`)
    }
    const target = { url: device.url, mtk, check: checkAnswer }
    for (let i = 0; i < 10; i++) {
      const detected = await device.post('/gtw/cwai/aihost/PTaskDetectPic', { taskId, algorithmCode: 'face-detection', imageBase64: IMAGE_BASE64 }, mtk)
      note(`detect ${detected.body.resCode === 1 ? 'ok' : detected.body.resMsg?.[0]?.messageKey}`)
      checkAnswer('PTaskDetectPic', detected)
      const uploaded = await uploadChunks(target, `disk-${i}`).then(() => 'ok', (e: Error) => /"messageKey":"([^"]+)"/.exec(e.message)?.[1] ?? e.message.slice(0, 80))
      note(`upload ${uploaded}`)
      const signIn = await device.post('/gtw/cwai/login/DoLogin', { account: `disk-${i}`, pwd: md5Hex('wrong') })
      note(`event ${signIn.body.resMsg?.[0]?.messageKey}`)
      checkAnswer('DoLogin', signIn)
      if (device.process.exitCode !== null) break
    }
    result.whileFull = answers
    // The causes the device logged for its failures while full (error codes only).
    result.loggedErrorCodes = [...new Set(device.logs.filter((l) => Number(l.level) >= 50).map((l) => (l.err as { code?: string } | undefined)?.code ?? String(l.msg)))]
    if (device.process.exitCode !== null) {
      figures.lost.push(`full disk: the device exited with ${device.process.exitCode}`)
      return result
    }
    if (!answers['detect ok']) figures.lost.push('full disk: detections stopped working')
    rmSync(path.join(mountPoint, 'filler'))
    figures.recoveries++
    const after = await uploadChunks(target, 'disk-after').then(() => 'ok', (e: Error) => e.message.slice(0, 200))
    result.uploadAfterSpaceReturned = after
    if (after !== 'ok') figures.lost.push(`full disk: upload after space returned: ${after}`)
    // Refused uploads' sessions may stay open (resumable); cancelling them gives their reservation back.
    const caps = async () => (await device!.post('/gtw/cwai/atomic/model/uploadCapabilities', {}, mtk)).body.resData
    result.capabilitiesAfter = { reservedBySessionsBytes: (await caps()).reservedBySessionsBytes, activeSessions: (await caps()).activeSessions }
    const files = leftoverFiles(dataDir)
    if (files.length) figures.leaks.push(`full disk: files left: ${files.join(', ')}`)
    log(`full disk: ${JSON.stringify(result)}`)
  } finally {
    await device?.stop()
    execFileSync('umount', ['-l', mountPoint])
    rmSync(mountPoint, { recursive: true, force: true })
  }
  return result
}
