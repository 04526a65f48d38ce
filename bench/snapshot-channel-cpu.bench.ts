/**
 * CPU of one stream-task channel with full-resolution snapshots on against off
 * (docs/cameras-and-stream-tasks.md "Snapshots"): the real device (dist/), a 1280 × 720 RTSP camera on loopback
 * playing one-by-one-person-detection.mp4 scaled up, a person-detector task at 5 fps and a dwell policy (an alarm per
 * person), for a run of `--seconds` (120) per setting after a warm-up. CPU (user + system, /proc) of the device's
 * server process, of its ffmpeg readers (the camera's own and the task's) and of the inference sidecar, per second of
 * the run. Accuracy beside it, from the same run: the snapshots taken (object.entered, alarm.raised), how many at the
 * camera's size, their skew after the analysed frame, and the share on which the device's person detector finds a
 * person with IoU >= 0.5 against the event's box (checked after the run, outside the measured window).
 * `flock /work/bench.lock npx tsx bench/snapshot-channel-cpu.bench.ts [--seconds 120]`
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { iou } from '../runtime/streams/tracker.ts'
import { addFootageCamera } from '../test/helpers/cameras.ts'
import { startDevice } from '../test/helpers/device.ts'
import { FFMPEG } from '../test/helpers/media.ts'
import { PERSON_VIDEO } from '../test/helpers/video.ts'
import { BENCH_OUT_DIR } from './lib/report.ts'

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '120' }, warmup: { type: 'string', default: '15' } } })
const SECONDS = Number(values.seconds)
const WARMUP = Number(values.warmup)
const TICKS = 100 // USER_HZ on Linux

/** Every process of the tree under `pid`: its CPU seconds so far and what it is. */
function tree(pid: number): Map<number, { cpu: number; kind: 'server' | 'ffmpeg' | 'sidecar' | 'other' }> {
  const stats = new Map<number, { ppid: number; cpu: number; comm: string }>()
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8')
      stats.set(Number(name), { ppid: Number(fields[1]), cpu: (Number(fields[11]) + Number(fields[12])) / TICKS, comm: cmd })
    } catch { /* exited meanwhile */ }
  }
  const pids = [pid]
  for (let i = 0; i < pids.length; i++) for (const [child, stat] of stats) if (stat.ppid === pids[i]) pids.push(child)
  return new Map(pids.filter((p) => stats.has(p)).map((p) => {
    const { cpu, comm } = stats.get(p)!
    const kind = p === pid ? 'server' : comm.includes('ffmpeg') ? 'ffmpeg' : comm.includes('sidecar') ? 'sidecar' : 'other'
    return [p, { cpu, kind }] as const
  }))
}

async function run(video: string, fullResolution: boolean) {
  const device = await startDevice({ env: { EVENT_POLL_MS: '100', SNAPSHOT_FULL_RESOLUTION: String(fullResolution), LOG_LEVEL: 'info' } })
  const mtk = await device.adminToken()
  const ok = async (route: string, body: unknown) => {
    const answer = await device.post(route, body, mtk)
    if (answer.body.resMsg?.length) throw new Error(`${route}: ${JSON.stringify(answer.body.resMsg)}`)
    return answer.body.resData
  }
  const camera = await addFootageCamera(device, mtk, 'office', video)
  try {
    await ok('/gtw/cwai/AlarmStrage/add', { policyName: 'dwell 2 s', conditions: { cameraId: camera.cameraId, label: 'person', minDwellS: 2 }, cooldownS: 600 })
    await ok('/v1/cwai/aihost/TaskCreate', { taskId: 'cpu', algorithmCode: 'person-detector', cameraId: camera.cameraId, targetFps: 5 })
    await new Promise((resolve) => setTimeout(resolve, WARMUP * 1000))
    const before = tree(device.process.pid!)
    const startedAt = new Date().toISOString()
    await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000))
    const after = tree(device.process.pid!)
    const endedAt = new Date().toISOString()
    const cpu: Record<string, number> = { server: 0, ffmpeg: 0, sidecar: 0, other: 0 }
    for (const [pid, { cpu: used, kind }] of after) cpu[kind]! += used - (before.get(pid)?.cpu ?? 0)
    const perSecond = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, Number((v / SECONDS * 100).toFixed(2))]))
    const status = await ok('/v1/cwai/aihost/QueryTaskStatus', { taskId: 'cpu' })
    await ok('/v1/cwai/aihost/TaskCancle', { taskId: 'cpu' })
    // The snapshots of the run and whether the person is under the box (outside the window).
    const rows = (await ok('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 500, kinds: ['object.entered', 'alarm.raised'], startTime: startedAt, endTime: endedAt })).rows
    await ok('/gtw/cwai/aihost/PTaskCreate', { taskId: 'check', algorithmCode: 'person-detector', algorithmUpdateTime: String(Date.now()) })
    const shots = []
    for (const row of rows) {
      const jpeg = Buffer.from(await (await fetch(device.url + row.payload.snapshotUrl, { headers: { mtk } })).arrayBuffer())
      const detected = await ok('/gtw/cwai/aihost/PTaskDetectPic', { taskId: 'check', algorithmCode: 'person-detector', imageBase64: jpeg.toString('base64') })
      const scale = row.payload.snapshotWidth / 1280
      const box = { x: row.payload.box.x * scale, y: row.payload.box.y * scale, width: row.payload.box.width * scale, height: row.payload.box.height * scale }
      const best = Math.max(0, ...detected.areaList.flatMap((a: any) => a.targetList).filter((t: any) => t.confidence[0]?.label === 'person').map((t: any) => iou(t.box, box)))
      shots.push({ kind: row.kind, fullResolution: row.payload.snapshotFullResolution, skewMs: row.payload.snapshotSkewMs, iou: Number(best.toFixed(3)) })
    }
    return {
      fullResolution, cpuPercentOfOneCore: perSecond,
      stream: { framesIn: status.framesIn, framesProcessed: status.framesProcessed, framesDropped: status.framesDropped, motionSkipped: status.motionSkipped, criticalPathLatencyP99Ms: status.criticalPathLatencyP99Ms },
      snapshots: shots.length, atCameraSize: shots.filter((s) => s.fullResolution).length, personUnderBox: shots.filter((s) => s.iou >= 0.5).length, shots,
    }
  } finally {
    await device.stop()
    device.cleanup()
    await camera.server.stop()
  }
}

const dir = mkdtempSync(path.join(tmpdir(), 'snapshot-channel-cpu-'))
try {
  const video = path.join(dir, 'office-720p.mp4')
  execFileSync(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-i', PERSON_VIDEO, '-vf', 'scale=1280:720', '-c:v', 'libx264', '-preset', 'veryfast',
    '-pix_fmt', 'yuv420p', '-r', '10', '-g', '10', '-keyint_min', '10', '-sc_threshold', '0', '-an', '-y', video])
  const results = []
  for (const fullResolution of [false, true]) {
    const result = await run(video, fullResolution)
    console.log(JSON.stringify({ ...result, shots: undefined }))
    results.push(result)
  }
  mkdirSync(BENCH_OUT_DIR, { recursive: true })
  writeFileSync(path.join(BENCH_OUT_DIR, 'snapshot-channel-cpu.json'), `${JSON.stringify({ measuredAt: new Date().toISOString(), seconds: SECONDS, results }, null, 2)}\n`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
