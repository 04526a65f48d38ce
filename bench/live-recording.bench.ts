/**
 * Live view and recording against their floor (docs/recording-and-live-view.md "Live view", "Recording"): a camera is
 * an RTSP server on loopback (bench/lib/marker-rtsp-server.py) sending a 1280×720, 25 fps,
 * ~3 Mbit/s H.264 video whose frames carry their number as 16 black or white squares, to each
 * client from a pipeline of its own (as a camera serves its clients; a shared one stopped every
 * client for seconds at each join, and the camera's own reader timed out), printing when it
 * sent each frame. The floor is ffmpeg copying the same RTSP stream to a file (`-c copy`): what
 * any copy of the stream costs at least.
 *
 * - Live latency: source frame sent → the same frame in Chromium's video element on the
 *   console's Live page (the first time the page can draw it: the video is drawn every 10 ms
 *   and the frame's number read from its pixels); beside it the latency of ffmpeg decoding the
 *   RTSP stream directly (the floor of any viewer). Target: p50 and p90 < 2 s.
 *   The floor, ffmpeg copying to a file, shows no frame, so it has no latency to
 *   compare; a decoder reading the camera is the closest thing a viewer can do.
 * - Live CPU: the live ffmpeg and the runtime's own CPU above an idle window just before, with
 *   1 and with 4 viewers reading the stream, against the floor's CPU; per viewer with 4 is the
 *   whole divided by 4 (the ffmpeg is shared), and what each viewer past the first adds is in
 *   details.
 * - Recording CPU per camera: the segment writer and the clip joins (continuous recording with
 *   a clip every CHUNK_SECONDS = 10 s, 30 times the joins of the default 300 s), and the
 *   segment writer alone (a camera between clips), against the floor. Target ≤
 *   1.2 × the floor. The runtime's own CPU above the idle window (a line per segment, a row and
 *   an event per clip) is in details beside its idle CPU: it is within the idle work's spread.
 * Idle and busy windows alternate in rounds; medians are reported, every round in details. The
 * machine may be shared: the load average at each phase is in settings.
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { readFileSync, readdirSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { chromium } from 'playwright-core'
import { spawnChild, type Child } from './lib/child-process.ts'
import { startBenchDevice, type BenchDevice } from './lib/device-process.ts'
import { BENCH_DIR, figure, writeReport } from './lib/report.ts'

const ROOT = path.dirname(BENCH_DIR)
const FFMPEG = path.join(ROOT, 'node_modules/@ffmpeg-installer/linux-x64/ffmpeg')
const WINDOW_SECONDS = Number(process.env.BENCH_WINDOW_SECONDS ?? 15)
/** Idle and busy windows alternate this many times; medians are reported (the device's idle work varies). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const FPS = 25
const SIZE = { width: 1280, height: 720 }
const BITS = 16
const SQUARE = 40
const CHUNK_SECONDS = 10
/** The marker video repeats a piece this long (a whole number of key frame intervals); its frames are numbered within it. */
const PIECE_SECONDS = 60
const PIECE_FRAMES = PIECE_SECONDS * FPS
const VIEWERS = 4
/** A client that joined the camera (an ffmpeg starting, connecting, reading its first key frame) is measured from this long after. */
const JOIN_SETTLE_MS = 6000
/** The console's player starts behind the live edge and plays faster until it catches up: its frames are dated from this long after it starts. */
const CATCH_UP_MS = 12_000
/** After a busy window the device tears down what stopped (ffmpeg exits, the ring is deleted, sessions end): the next idle window starts this much later. */
const STOP_SETTLE_MS = 8000
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const median = (values: number[]) => percentile(values, 50)
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

/**
 * The marker video: a moving test picture with the frame number (within a piece of
 * PIECE_SECONDS) in 16 squares across its top left. The piece is encoded once and repeated
 * without re-encoding up to `seconds` (encoding the whole took minutes on a loaded machine).
 */
function markerVideo(file: string, seconds: number): void {
  const piece = file.replace(/\.mp4$/, '-piece.mp4')
  const squares = Array.from({ length: BITS }, (_, i) =>
    `drawbox=x=${i * SQUARE}:y=0:w=${SQUARE}:h=${SQUARE}:color=white:t=fill:enable='eq(mod(floor(n/${2 ** i}),2),1)'`)
  execFileSync(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc2=size=${SIZE.width}x${SIZE.height}:rate=${FPS}`, '-t', String(PIECE_SECONDS),
    '-vf', [`drawbox=x=0:y=0:w=${BITS * SQUARE}:h=${SQUARE}:color=black:t=fill`, ...squares].join(','),
    '-c:v', 'libx264', '-preset', 'ultrafast', '-profile:v', 'main', '-pix_fmt', 'yuv420p', '-b:v', '3M', '-maxrate', '3M', '-bufsize', '6M',
    '-g', String(2 * FPS), '-y', piece])
  execFileSync(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-stream_loop', String(Math.ceil(seconds / PIECE_SECONDS) - 1), '-i', piece, '-c', 'copy', '-y', file])
}

/** The frame number in a strip of gray pixels `SQUARE` high (one byte a pixel, `stride` wide). */
const numberOf = (gray: Uint8Array | Buffer, stride: number) => {
  let n = 0
  for (let i = 0; i < BITS; i++) if (gray[(SQUARE / 2) * stride + i * SQUARE + SQUARE / 2]! > 128) n += 2 ** i
  return n
}

/**
 * CPU seconds of a process: its own from the scheduler's nanosecond counters of its threads
 * (/proc/<pid>/task/<tid>/schedstat; /proc/<pid>/stat counts 10 ms ticks, ±0.07 % of a core
 * over a 15 s window, a sixth of what an ffmpeg copying the stream uses), and its ended
 * children's from /proc/<pid>/stat (ticks; the clip joins).
 */
function cpuOf(pid: number): { own: number; children: number } {
  let ns = 0
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
    } catch {
      // the thread ended meanwhile (ffmpeg's and the runtime's threads live as long as they do)
    }
  }
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number)
  return { own: ns / 1e9, children: (fields[13]! + fields[14]!) / TICKS }
}

/** The device's ffmpeg child whose command line contains `marker`, null when there is none (being restarted). */
function findFfmpegChild(devicePid: number, marker: string): number | null {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === devicePid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) return Number(entry)
    } catch {
      // gone meanwhile
    }
  }
  return null
}

function ffmpegChild(devicePid: number, marker: string): number {
  const pid = findFfmpegChild(devicePid, marker)
  if (pid === null) throw new Error(`no ffmpeg child of the device with ${marker}`)
  return pid
}

/** CPU over one window, as shares of one core: the processes' own, and the children that ended meanwhile under `parent`. */
async function cpuWindow(pids: number[], parent: number): Promise<{ own: number[]; endedChildren: number }> {
  const before = pids.map(cpuOf)
  await sleep(WINDOW_SECONDS * 1000)
  const after = pids.map(cpuOf)
  const share = (seconds: number) => seconds / WINDOW_SECONDS
  return { own: after.map((a, i) => share(a.own - before[i]!.own)), endedChildren: share(after[pids.indexOf(parent)]!.children - before[pids.indexOf(parent)]!.children) }
}

/** One client's pipeline on the camera: when it started, and when it sent each frame (by presentation time in frames; ms since epoch). */
interface Media {
  startedAt: number
  sent: Map<number, number>
  /** The first frame's presentation time in frames (the decoder delay of B-frames, not 0). */
  first: number
}

interface Camera {
  child: Child
  url: string
  media: Map<number, Media>
}

/**
 * The pipeline a client that connected after `since` was reading at `seen`: the latest one
 * started by then (a client that reconnects gets a new one).
 */
const mediaFor = (camera: Camera, since: number, seen: number) =>
  [...camera.media.values()].filter((m) => m.startedAt >= since && m.startedAt <= seen).at(-1)

/**
 * When the pipeline sent the frame showing number n, last before `seen`: the number repeats
 * every piece of the video (PIECE_FRAMES), and a frame is seen well within a piece of being sent.
 */
function sentAt(media: Media | undefined, n: number, seen: number): number | undefined {
  let latest: number | undefined
  for (let frame = media ? media.first + n : NaN; media?.sent.has(frame); frame += PIECE_FRAMES) {
    const at = media.sent.get(frame)!
    if (at <= seen) latest = at
  }
  return latest
}

/** Latency (ms) of each frame seen, [number shown, when], by a client that connected after `since`. */
const latencies = (camera: Camera, since: number, seen: [number, number][]) =>
  seen.flatMap(([n, at]) => {
    const sent = sentAt(mediaFor(camera, since, at), n, at)
    return sent === undefined ? [] : [at - sent]
  })

async function startCamera(file: string, port: number): Promise<Camera> {
  const child = spawnChild('/usr/bin/python3', [path.join(BENCH_DIR, 'lib/marker-rtsp-server.py'), file, String(port), '/cam'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const media = new Map<number, Media>()
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the RTSP server did not start')), 15_000)
    createInterface({ input: child.process.stdout! }).on('line', (line) => {
      if (line === 'ready') {
        clearTimeout(timer)
        resolve()
      } else if (line.startsWith('{')) {
        const event = JSON.parse(line) as { media: number; start?: number; pts?: number; at?: number }
        if (event.start !== undefined) media.set(event.media, { startedAt: event.start, sent: new Map(), first: Infinity })
        const pipeline = media.get(event.media)
        if (pipeline && event.pts !== undefined) {
          const frame = Math.round((event.pts * FPS) / 1e9)
          pipeline.sent.set(frame, event.at!)
          pipeline.first = Math.min(pipeline.first, frame)
        }
      }
    })
  })
  return { child, url: `rtsp://127.0.0.1:${port}/cam`, media }
}

/** ffmpeg copying the camera to a file: the floor's CPU, as a share of one core. */
async function floorCpu(camera: Camera, dir: string): Promise<number> {
  const copy = spawnChild(FFMPEG, ['-hide_banner', '-nostdin', '-loglevel', 'error', '-rtsp_transport', 'tcp', '-i', camera.url, '-map', '0:v:0', '-c', 'copy', '-y', path.join(dir, 'floor.mp4')], { stdio: 'ignore' })
  await sleep(JOIN_SETTLE_MS)
  const { own } = await cpuWindow([copy.process.pid!], copy.process.pid!)
  await copy.stop()
  return own[0]!
}

/** ffmpeg decoding the camera directly, low-delay: the floor of a viewer's latency (ms per frame). */
async function floorLatency(camera: Camera): Promise<number[]> {
  const since = Date.now()
  const reader = spawn(FFMPEG, ['-hide_banner', '-nostdin', '-loglevel', 'error', '-fflags', 'nobuffer', '-flags', 'low_delay', '-rtsp_transport', 'tcp', '-i', camera.url,
    '-vf', `crop=${BITS * SQUARE}:${SQUARE}:0:0`, '-f', 'rawvideo', '-pix_fmt', 'gray', 'pipe:1'], { stdio: ['ignore', 'pipe', 'ignore'] })
  const frameBytes = BITS * SQUARE * SQUARE
  const seen: [number, number][] = []
  let pending = Buffer.alloc(0)
  reader.stdout.on('data', (chunk: Buffer) => {
    const now = Date.now()
    pending = Buffer.concat([pending, chunk])
    while (pending.length >= frameBytes) {
      seen.push([numberOf(pending, BITS * SQUARE), now])
      pending = pending.subarray(frameBytes)
    }
  })
  await sleep(WINDOW_SECONDS * 1000 + JOIN_SETTLE_MS)
  reader.kill('SIGTERM')
  return latencies(camera, since, seen).slice(-WINDOW_SECONDS * FPS)
}

/** The console's Live page in Chromium: each frame shown, its number and expected display time. */
async function browserLatency(device: BenchDevice, camera: Camera): Promise<number[]> {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium-headless-shell', args: ['--headless', '--no-sandbox', '--disable-gpu'], headless: true })
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    const since = Date.now()
    await page.goto(`${device.url}/console/#/live`)
    await page.getByLabel('Password').fill('bench-Passw0rd')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByTestId('live-video').waitFor({ timeout: 60_000 })
    // Each new frame, when the page first has it (sampled every 10 ms: requestVideoFrameCallback
    // fires only when headless Chromium composites, which is not every frame). A script as text:
    // tsx names functions with a helper the page does not have.
    await page.evaluate(`(() => {
      const bits = ${BITS}, square = ${SQUARE}
      const video = document.querySelector('[data-testid="live-video"]')
      const context = new OffscreenCanvas(bits * square, square).getContext('2d', { willReadFrequently: true })
      const shown = window.shown = []
      let last = -1
      setInterval(() => {
        const at = Date.now()
        context.drawImage(video, 0, 0, bits * square, square, 0, 0, bits * square, square)
        const data = context.getImageData(0, 0, bits * square, square).data
        let n = 0
        for (let i = 0; i < bits; i++) if (data[((square / 2) * bits * square + i * square + square / 2) * 4] > 128) n += 2 ** i
        if (n !== last) shown.push([n, at])
        last = n
      }, 10)
    })()`)
    const started = Date.now()
    await sleep(WINDOW_SECONDS * 1000 + CATCH_UP_MS)
    const shown = await page.evaluate('window.shown') as [number, number][]
    // The first seconds are the player catching up with the live edge.
    return latencies(camera, since, shown.filter(([, at]) => at > started + CATCH_UP_MS))
  } finally {
    await browser.close()
  }
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-live-'))
  const video = path.join(dir, 'marker.mp4')
  // Long enough for every phase without a loop (the RTSP server would end its sessions there):
  // the camera's own reader plays it from the camera's addition to the end. The phases' nominal
  // length (floor, 3 × rounds, latencies), half as much again for rounds measured again, and 2 min.
  const phases = ROUNDS * (JOIN_SETTLE_MS / 1000 + WINDOW_SECONDS) + 3 * ROUNDS * (2 * WINDOW_SECONDS + (JOIN_SETTLE_MS + STOP_SETTLE_MS) / 1000) +
    2 * (WINDOW_SECONDS + CATCH_UP_MS / 1000)
  markerVideo(video, 1.5 * phases + 120)
  const camera = await startCamera(video, 18_000 + Math.floor(Math.random() * 2000))
  const device = await startBenchDevice({ RECORD_CONTINUOUS_CHUNK_SECONDS: String(CHUNK_SECONDS), LIVE_MAX_VIEWERS_PER_CAMERA: String(VIEWERS + 1) })
  const readers: AbortController[] = []
  try {
    const mtk = await device.signIn()
    const post = async (route: string, body: unknown) => {
      const answer = await (await fetch(device.url + route, { method: 'POST', headers: { 'content-type': 'application/json', mtk }, body: JSON.stringify(body) })).json() as { resCode: number; resData: any; resMsg: unknown[] }
      if (answer.resCode !== 1) throw new Error(`${route}: ${JSON.stringify(answer.resMsg)}`)
      return answer.resData
    }
    const { cameraId } = await post('/gtw/cwai/Camera/add', { cameraName: 'bench', sourceType: 'rtsp', url: camera.url })
    await sleep(JOIN_SETTLE_MS)

    /** Why rounds were measured again (reported). */
    const roundsRedone: string[] = []
    /**
     * Rounds of an idle window and a busy one (after `start`, until `stop`): per round the
     * busy process's CPU (`busy()`: the recorder's or the live view's ffmpeg), the children
     * that ended meanwhile (clip joins), the runtime's own CPU in the idle window and above it. A
     * round in which the camera's own reader was restarted (its whole CPU would land in the
     * ended children) is done again.
     */
    const rounds = async (start: () => Promise<void>, stop: () => Promise<void>, busy: () => number) => {
      const out: { process: number; joins: number; runtimeIdle: number; runtimeAboveIdle: number }[] = []
      const redone: string[] = []
      for (let attempt = 0; out.length < ROUNDS && attempt < 3 * ROUNDS; attempt++) {
        const reader = findFfmpegChild(device.pid, 'rawvideo')
        const idle = await cpuWindow([device.pid], device.pid)
        await start()
        await sleep(JOIN_SETTLE_MS)
        const window = await cpuWindow([device.pid, busy()], device.pid)
        await stop()
        await sleep(STOP_SETTLE_MS)
        const readerNow = findFfmpegChild(device.pid, 'rawvideo')
        const why = reader === null || readerNow !== reader ? `the camera reader restarted (${reader} → ${readerNow})`
          : idle.endedChildren > 0 ? `a child of the device ended in the idle window (${(idle.endedChildren * 100).toFixed(2)} % core)` : null
        if (why) {
          redone.push(why)
          console.log(`live-recording: round done again: ${why}`)
          continue
        }
        out.push({ process: window.own[1]!, joins: window.endedChildren, runtimeIdle: idle.own[0]!, runtimeAboveIdle: window.own[0]! - idle.own[0]! })
      }
      if (out.length < ROUNDS) throw new Error(`too many rounds disturbed: ${redone.join('; ')}`)
      roundsRedone.push(...redone)
      return out
    }
    const load: Record<string, number[]> = {}
    /** The load average after a phase, kept for the report and printed as progress. */
    const done = (phase: string) => {
      load[phase] = loadavg()
      console.log(`live-recording: ${phase} done, load average ${load[phase]!.map((v) => v.toFixed(2)).join(' ')}`)
    }
    done('start')
    const floors: number[] = []
    for (let round = 0; round < ROUNDS; round++) floors.push(await floorCpu(camera, dir))
    const floor = median(floors)
    done('floor')

    const recording = await rounds(
      () => post('/gtw/cwai/System/SetRecordParam', { cameras: [{ cameraId, mode: 'continuous' }] }),
      () => post('/gtw/cwai/System/SetRecordParam', { cameras: [{ cameraId, mode: 'off' }] }),
      () => ffmpegChild(device.pid, 'segment_list'))
    const clips = (await post('/gtw/cwai/System/RecordClipPage', { pageSize: 1 })).total as number
    done('recording')

    /** Opens `count` viewers, each reading its stream to the end, as a player does. */
    const openViewers = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const session = await post('/gtw/cwai/LiveStream/request', { cameraId })
        const controller = new AbortController()
        readers.push(controller)
        const keepAlive = setInterval(() => void post('/gtw/cwai/LiveStream/keepAlive', { sessionId: session.sessionId }).catch(() => undefined), 5000)
        controller.signal.addEventListener('abort', () => {
          clearInterval(keepAlive)
          void post('/gtw/cwai/LiveStream/stop', { sessionId: session.sessionId }).catch(() => undefined)
        })
        void fetch(device.url + session.url, { signal: controller.signal }).then(async (response) => {
          for await (const _ of response.body as unknown as AsyncIterable<Uint8Array>) { /* read */ }
        }).catch(() => undefined)
      }
    }
    const closeViewers = async () => { for (const reader of readers.splice(0)) reader.abort() }
    const live = (count: number) => rounds(() => openViewers(count), closeViewers, () => ffmpegChild(device.pid, 'frag_keyframe'))
    const oneViewer = await live(1)
    const manyViewers = await live(VIEWERS)
    done('live')
    // Recording: its ffmpeg and its joins; the runtime's own work for it (a csv line per segment,
    // a row and an event per clip) is below the noise of its idle work, in details. Live view:
    // its ffmpeg and the runtime cutting its output into fragments and sending them to each viewer.
    const recordingCpu = median(recording.map((r) => r.process + r.joins))
    const writerCpu = median(recording.map((r) => r.process))
    const oneViewerCpu = median(oneViewer.map((r) => r.process + r.runtimeAboveIdle))
    const manyViewersCpu = median(manyViewers.map((r) => r.process + r.runtimeAboveIdle))
    const perViewerCpu = manyViewersCpu / VIEWERS

    const floorLatencies = await floorLatency(camera)
    const browserLatencies = await browserLatency(device, camera)
    done('latency')
    if (browserLatencies.length < WINDOW_SECONDS * FPS * 0.2) throw new Error(`the browser showed only ${browserLatencies.length} dated frames`)

    const percent = (share: number) => Math.round(share * 10_000) / 100
    const ms = (value: number) => Math.round(value)
    await writeReport({
      benchmark: 'live-recording',
      description: 'Live view (latency source → browser frame, CPU per viewer) and recording (CPU per camera) against ffmpeg copying the same RTSP stream to a file',
      settings: {
        windowSeconds: WINDOW_SECONDS, rounds: ROUNDS, video: `${SIZE.width}x${SIZE.height} H.264 Main, ${FPS} fps, 3 Mbit/s, key frame every 2 s`,
        viewers: VIEWERS, recordSegmentSeconds: 2, recordContinuousChunkSeconds: CHUNK_SECONDS, cpuUnit: 'percent of one core, averaged over the window',
        // 1, 5 and 15 min load averages at the start and after each phase (2 cores, shared with other work).
        loadAverage: load,
      },
      figures: [
        figure({ name: 'live latency p50, source frame to browser frame', unit: 'ms', value: ms(percentile(browserLatencies, 50)), baseline: { name: 'ffmpeg decoding the RTSP stream directly, p50', value: ms(percentile(floorLatencies, 50)) }, target: { valueAtMost: 2000 } }),
        figure({ name: 'live latency p90, source frame to browser frame', unit: 'ms', value: ms(percentile(browserLatencies, 90)), baseline: { name: 'ffmpeg decoding the RTSP stream directly, p90', value: ms(percentile(floorLatencies, 90)) }, target: { valueAtMost: 2000 } }),
        figure({ name: `recording CPU per camera, a clip joined every ${CHUNK_SECONDS} s (segment writer + clip joins)`, unit: '% core', value: percent(recordingCpu), baseline: { name: 'ffmpeg -c copy of the RTSP stream to a file', value: percent(floor) }, target: { ratioAtMost: 1.2 } }),
        figure({ name: 'recording CPU per camera between clips (segment writer)', unit: '% core', value: percent(writerCpu), baseline: { name: 'ffmpeg -c copy of the RTSP stream to a file', value: percent(floor) }, target: { ratioAtMost: 1.2 } }),
        figure({ name: 'live view CPU, 1 viewer (live ffmpeg + runtime above idle)', unit: '% core', value: percent(oneViewerCpu), baseline: { name: 'ffmpeg -c copy of the RTSP stream to a file', value: percent(floor) }, target: { ratioAtMost: 1.5 } }),
        figure({ name: `live view CPU per viewer, ${VIEWERS} viewers`, unit: '% core', value: percent(perViewerCpu), baseline: { name: 'ffmpeg -c copy of the RTSP stream to a file', value: percent(floor) }, target: { ratioAtMost: 1 } }),
      ],
      details: {
        recordingClipsWritten: clips,
        roundsRedone,
        addedCpuPerViewerPastTheFirstPercent: percent((manyViewersCpu - oneViewerCpu) / (VIEWERS - 1)),
        roundsCpuPercent: {
          floor: floors.map(percent),
          recording: recording.map((r) => ({ segmentWriter: percent(r.process), joins: percent(r.joins), runtimeIdle: percent(r.runtimeIdle), runtimeAboveIdle: percent(r.runtimeAboveIdle) })),
          oneViewer: oneViewer.map((r) => ({ liveFfmpeg: percent(r.process), runtimeIdle: percent(r.runtimeIdle), runtimeAboveIdle: percent(r.runtimeAboveIdle) })),
          viewers: manyViewers.map((r) => ({ liveFfmpeg: percent(r.process), runtimeIdle: percent(r.runtimeIdle), runtimeAboveIdle: percent(r.runtimeAboveIdle) })),
        },
        browserLatencyMs: { frames: browserLatencies.length, p10: ms(percentile(browserLatencies, 10)), p50: ms(percentile(browserLatencies, 50)), p90: ms(percentile(browserLatencies, 90)), max: ms(Math.max(...browserLatencies)) },
        floorLatencyMs: { frames: floorLatencies.length, p10: ms(percentile(floorLatencies, 10)), p50: ms(percentile(floorLatencies, 50)), p90: ms(percentile(floorLatencies, 90)), max: ms(Math.max(...floorLatencies)) },
      },
    })
  } finally {
    for (const reader of readers) reader.abort()
    await device.stop()
    await camera.child.stop()
    await rm(dir, { recursive: true, force: true })
  }
}

await main()
