/**
 * Decode CPU of one stream-task channel (docs/cameras-and-stream-tasks.md "Stream tasks"): the device's own camera
 * reader (FfmpegReader, a file source played at its own rate like a camera) at 5 fps, raw RGB
 * frames at the analysis size (person-detector: longest side 512) against the same reader at
 * the camera's size, on the footage (768 × 432) and on a 1920 × 1080 copy of it. CPU is the
 * ffmpeg child's (utime + stime from /proc) plus this process's while it reads the frames.
 * Rounds interleave the two settings. `npx tsx bench/decode-cpu.bench.ts [--seconds 20] [--rounds 2]`
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { ffmpegBinary, rtspTimeoutOption } from '../runtime/cameras/ffmpeg.ts'
import { FfmpegReader } from '../runtime/cameras/reader.ts'
import { figure, writeReport } from './lib/report.ts'

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '20' }, rounds: { type: 'string', default: '2' } } })
const SECONDS = Number(values.seconds)
const ROUNDS = Number(values.rounds)
const FPS = 5
const MAX_SIDE = 512
const VIDEO = path.resolve(import.meta.dirname, '../../shared/media/one-by-one-person-detection.mp4')
const TICKS = 100 // USER_HZ on Linux

const binary = ffmpegBinary('')
const option = await rtspTimeoutOption(binary, 10_000)

/** CPU seconds of a process so far (user + system). */
function cpuOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / TICKS
}

/** One channel read for SECONDS: CPU per second of video (ffmpeg, and this process), frames and their size. */
async function channel(file: string, maxSide: number | null) {
  let frames = 0
  let size = ''
  const reader = new FfmpegReader(binary, { sourceType: 'file', input: file }, { fps: FPS, maxSide, connectTimeoutMs: 20_000, stallTimeoutMs: 20_000, rtspTimeoutOption: option }, null, {
    onInfo: () => {},
    onFrame: (frame) => { frames++; size = `${frame.width}x${frame.height}` },
    onFailure: (error) => { throw error },
  })
  const ownBefore = process.cpuUsage()
  reader.start()
  const pid = reader.pid!
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000))
  const ffmpeg = cpuOf(pid)
  const own = process.cpuUsage(ownBefore)
  await reader.stop()
  return { ffmpegCpuPerSecond: ffmpeg / SECONDS, readerCpuPerSecond: (own.user + own.system) / 1e6 / SECONDS, frames, size }
}

const dir = mkdtempSync(path.join(tmpdir(), 'decode-cpu-'))
try {
  const fullHd = path.join(dir, 'footage-1080p.mp4')
  execFileSync(binary, ['-v', 'error', '-t', String(SECONDS * 2), '-i', VIDEO, '-vf', 'scale=1920:1080', '-c:v', 'libx264', '-preset', 'veryfast', '-g', '20', '-pix_fmt', 'yuv420p', '-y', fullHd])
  const sources = { '768x432': VIDEO, '1920x1080': fullHd }
  const results: Record<string, { scaled: Awaited<ReturnType<typeof channel>>[]; full: Awaited<ReturnType<typeof channel>>[] }> = {}
  for (const [name, file] of Object.entries(sources)) {
    results[name] = { scaled: [], full: [] }
    for (let round = 0; round < ROUNDS; round++) {
      results[name].full.push(await channel(file, null))
      results[name].scaled.push(await channel(file, MAX_SIDE))
    }
  }
  const mean = (runs: { ffmpegCpuPerSecond: number; readerCpuPerSecond: number }[]) =>
    runs.reduce((sum, r) => sum + r.ffmpegCpuPerSecond + r.readerCpuPerSecond, 0) / runs.length
  const percent = (v: number) => Math.round(v * 1000) / 10
  await writeReport({
    benchmark: 'decode-cpu',
    description: 'CPU of one channel\'s camera reader at 5 fps: frames at the analysis size (longest side 512) vs at the camera\'s size',
    settings: { fps: FPS, maxSide: MAX_SIDE, secondsPerRun: SECONDS, rounds: ROUNDS, sources: Object.keys(sources) },
    figures: Object.keys(sources).map((name) => figure({
      name: `decode CPU per channel, ${name} source`, unit: '% of one core', value: percent(mean(results[name]!.scaled)),
      baseline: { name: 'frames at the camera\'s size', value: percent(mean(results[name]!.full)) },
      target: { ratioAtMost: 1 },
    })),
    details: Object.fromEntries(Object.entries(results).map(([name, r]) => [name, {
      scaled: r.scaled.map((x) => ({ ...x, ffmpegCpuPercent: percent(x.ffmpegCpuPerSecond), readerCpuPercent: percent(x.readerCpuPerSecond) })),
      full: r.full.map((x) => ({ ...x, ffmpegCpuPercent: percent(x.ffmpegCpuPerSecond), readerCpuPercent: percent(x.readerCpuPerSecond) })),
    }])),
  })
} finally {
  rmSync(dir, { recursive: true, force: true })
}
