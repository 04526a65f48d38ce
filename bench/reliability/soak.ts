import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { md5Hex } from '../../shared/auth/password.ts'
import { startDevice } from '../../test/helpers/device.ts'
import { helmetClassifier } from '../../test/helpers/tiny-models.ts'
import { uploadFile } from '../../test/helpers/upload-file.ts'
import { connectEvents } from '../../test/helpers/ws-client.ts'
import { samplePath } from '../../test/inference/helpers.ts'
import { ROOT, envelopeViolation, sampleProcess, sleep, waitUntil } from './lib.ts'

const MB = 2 ** 20
/**
 * Growth allowed over the last two thirds of the run (after warm-up: models loaded, caches
 * filled), from a least-squares line through the samples so that one GC does not decide it.
 */
export const BOUNDS = { serverRssBytes: 64 * MB, sidecarRssBytes: 128 * MB, serverFds: 16, sidecarFds: 16 }

interface Sample { t: number; server: { rssBytes: number; fds: number } | null; sidecar: { rssBytes: number; fds: number } | null }

export interface SoakFigures {
  durationMs: number
  requests: number
  byKind: Record<string, number>
  algorithms: Record<string, number>
  unavailableAlgorithms: Record<string, string>
  eventsEmitted: number
  eventsReceivedOverWebSocket: number
  subscribers: number
  samples: number
  first: Sample | null
  last: Sample | null
  growth: Record<string, number>
  bounds: typeof BOUNDS
  overBound: string[]
  errors: string[]
}

/** Least-squares growth of `values` over the time they span. */
function growth(points: { t: number; v: number }[]): number {
  if (points.length < 2) return 0
  const n = points.length
  const mt = points.reduce((s, p) => s + p.t, 0) / n
  const mv = points.reduce((s, p) => s + p.v, 0) / n
  const slope = points.reduce((s, p) => s + (p.t - mt) * (p.v - mv), 0) / (points.reduce((s, p) => s + (p.t - mt) ** 2, 0) || 1)
  return slope * (points.at(-1)!.t - points[0]!.t)
}

export async function runSoak(options: { durationMs: number; log: (line: string) => void }): Promise<SoakFigures> {
  const figures: SoakFigures = {
    durationMs: options.durationMs, requests: 0, byKind: {}, algorithms: {}, unavailableAlgorithms: {}, eventsEmitted: 0, eventsReceivedOverWebSocket: 0, subscribers: 0,
    samples: 0, first: null, last: null, growth: {}, bounds: BOUNDS, overBound: [], errors: [],
  }
  const device = await startDevice({ env: { LOGIN_MAX_FAILURES: '1', EVENT_POLL_MS: '200' } })
  const subscribers: ReturnType<typeof connectEvents>[] = []
  try {
    const mtk = await device.adminToken()
    // The operator model the helmet algorithm names (its manifest: task creation fails until it is uploaded).
    const helmet = await uploadFile(device, mtk, Buffer.from(helmetClassifier()), 'helmet.onnx', 'model')
    await device.post('/gtw/cwai/atomic/Model/upload', { uploadId: helmet, modelId: 'helmet-classifier' }, mtk)
    const algorithms: string[] = []
    for (const file of readdirSync(path.join(ROOT, 'models/manifests')).filter((f) => f.endsWith('.json')).sort()) {
      const algorithmId = JSON.parse(readFileSync(path.join(ROOT, 'models/manifests', file), 'utf8')).algorithmId as string
      const created = await device.post('/gtw/cwai/aihost/PTaskCreate', { taskId: `soak-${algorithmId}`, algorithmCode: algorithmId, algorithmUpdateTime: String(Date.now()) }, mtk)
      if (created.body.resCode === 1) algorithms.push(algorithmId)
      else figures.unavailableAlgorithms[algorithmId] = created.body.resMsg?.[0]?.messageKey
    }
    for (let i = 0; i < 3; i++) subscribers.push(connectEvents(device.wsPort, { mtk }))
    figures.subscribers = subscribers.length

    // Accounts whose failed sign-in was answered: each made a login.locked event (LOGIN_MAX_FAILURES=1).
    const eventAccounts = new Set<string>()
    const images = [1, 2, 3, 4].map((n) => readFileSync(samplePath(n)))
    const deadline = Date.now() + options.durationMs
    const count = (kind: string, answer: { status: number; body: any }) => {
      figures.requests++
      figures.byKind[kind] = (figures.byKind[kind] ?? 0) + 1
      const problem = envelopeViolation({ ...answer, contentType: '' })
      if (problem && figures.errors.length < 50) figures.errors.push(`${kind}: ${problem}`)
    }
    const detect = async (algorithmId: string, image: Buffer, byUpload: boolean) => {
      const source = byUpload ? { uploadId: await uploadFile(device, mtk, image, 'soak.jpg', 'image') } : { imageBase64: image.toString('base64') }
      if (byUpload) count('upload', { status: 200, body: { resCode: 1, resMsg: [] } })
      const answer = await device.post('/gtw/cwai/aihost/PTaskDetectPic', { taskId: `soak-${algorithmId}`, algorithmCode: algorithmId, ...source }, mtk)
      count('detect', answer)
      // Busy decode memory or a restarting sidecar is a retryable answer, not a failure of the soak.
      if (answer.body.resCode === 1) figures.algorithms[algorithmId] = (figures.algorithms[algorithmId] ?? 0) + 1
      else if (!answer.body.resMsg?.[0]?.retryable && figures.errors.length < 50) figures.errors.push(`detect ${algorithmId}: ${answer.body.resMsg?.[0]?.messageKey}`)
    }
    // Two clients: detections of every algorithm in turn (by upload and by base64), and events plus reads.
    const detector = (async () => {
      for (let i = 0; Date.now() < deadline; i++) {
        await detect(algorithms[i % algorithms.length]!, images[i % images.length]!, i % 2 === 0).catch((e: Error) => figures.errors.length < 50 && figures.errors.push(`detect: ${e.message.slice(0, 200)}`))
      }
    })()
    const chatter = (async () => {
      for (let i = 0; Date.now() < deadline; i++) {
        const signIn = await device.post('/gtw/cwai/login/DoLogin', { account: `soak-${i}`, pwd: md5Hex('wrong') })
        count('event', signIn)
        if (signIn.body?.resMsg?.[0]?.messageKey === 'api.error.LoginFailed') eventAccounts.add(`soak-${i}`)
        count('read', await device.post('/gtw/cwai/algorithm/page', { pageSize: 100 }, mtk))
        count('read', await device.post('/gtw/cwai/System/QueryDeviceStatus', {}, mtk))
        await sleep(200)
      }
    })()
    const samples: Sample[] = []
    const sampler = (async () => {
      const started = Date.now()
      while (Date.now() < deadline) {
        const status = (await device.post('/gtw/cwai/System/QueryDeviceStatus', {}, mtk)).body.resData
        samples.push({ t: Date.now() - started, server: sampleProcess(device.process.pid!), sidecar: status?.sidecar?.pid ? sampleProcess(status.sidecar.pid) : null })
        if (samples.length % 12 === 0) {
          const s = samples.at(-1)!
          options.log(`soak ${Math.round(s.t / 1000)} s: ${figures.requests} requests; server ${Math.round((s.server?.rssBytes ?? 0) / MB)} MB ${s.server?.fds} fds, sidecar ${Math.round((s.sidecar?.rssBytes ?? 0) / MB)} MB ${s.sidecar?.fds} fds`)
        }
        await sleep(5000)
      }
    })()
    await Promise.all([detector, chatter, sampler])

    figures.samples = samples.length
    figures.first = samples[0] ?? null
    figures.last = samples.at(-1) ?? null
    const tail = samples.filter((s) => s.t >= options.durationMs / 3)
    const series = (pick: (s: Sample) => number | undefined) => tail.flatMap((s) => { const v = pick(s); return v === undefined ? [] : [{ t: s.t, v }] })
    figures.growth = {
      serverRssBytes: Math.round(growth(series((s) => s.server?.rssBytes))),
      sidecarRssBytes: Math.round(growth(series((s) => s.sidecar?.rssBytes))),
      serverFds: Math.round(growth(series((s) => s.server?.fds))),
      sidecarFds: Math.round(growth(series((s) => s.sidecar?.fds))),
    }
    for (const [key, bound] of Object.entries(BOUNDS)) {
      const value = figures.growth[key]!
      if (value > bound) figures.overBound.push(`${key} grew by ${value} over the last two thirds (bound ${bound})`)
    }
    // Every subscriber gets every event at least once (spec 6).
    const accountsSeen = (r: (typeof subscribers)[number]) => new Set(r.events().filter((e) => e.kind === 'login.locked').map((e) => e.payload?.accountName))
    await waitUntil(() => subscribers.every((r) => [...eventAccounts].every((a) => accountsSeen(r).has(a))), 15_000, 250)
    subscribers.forEach((r, i) => {
      const missing = [...eventAccounts].filter((a) => !accountsSeen(r).has(a))
      if (missing.length) figures.errors.push(`WebSocket subscriber ${i} missed ${missing.length} of ${eventAccounts.size} events (${missing.slice(0, 5).join(', ')})`)
    })
    figures.eventsEmitted = eventAccounts.size
    figures.eventsReceivedOverWebSocket = subscribers.reduce((s, r) => s + r.events().length, 0)
    if (algorithms.some((a) => !figures.algorithms[a])) figures.errors.push(`no successful detection of ${algorithms.filter((a) => !figures.algorithms[a]).join(', ')}`)
    for (const [id, key] of Object.entries(figures.unavailableAlgorithms)) figures.errors.push(`shipped algorithm ${id} could not be loaded: ${key}`)
  } finally {
    for (const s of subscribers) s.ws.close()
    await device.stop()
    device.cleanup()
  }
  return figures
}
