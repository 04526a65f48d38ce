/**
 * CPU of a full-resolution snapshot (docs/cameras-and-stream-tasks.md "Snapshots") against the
 * analysed-frame snapshot (the baseline, measured in the same run): the device's own Snapshots
 * class (runtime/streams/snapshots.ts) cutting an alarm.raised snapshot — the box and its label drawn, the
 * JPEG at the System image quality's default (80), its size read back — from a frame of the
 * footage with a person in it, at the analysis size (512 × 288) and at the camera's size
 * (1280 × 720 and 1920 × 1080 copies of the footage). The full-size frame is handed over as the
 * camera's own reader holds it (that reader decodes every camera at its size already: no decode
 * is added). Rounds interleave the settings. CPU is this process's (user + system, libvips'
 * threads included) per snapshot.
 * Accuracy, per snapshot: the JPEG's size is the frame's, and the box's four edges are drawn at
 * the box's coordinates scaled to that size (green at their middles).
 * Per channel: the added CPU at the footage's rate of snapshots (6 visits in its 139.4 s, each an
 * object.entered and an alarm.raised).
 * `flock /work/bench.lock npx tsx bench/snapshot-cpu.bench.ts [--snapshots 40] [--rounds 3]`
 */
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { parseArgs } from 'node:util'
import sharp from 'sharp'
import { ffmpegBinary } from '../runtime/cameras/ffmpeg.ts'
import type { Frame } from '../runtime/cameras/reader.ts'
import { inFramePixels } from '../runtime/streams/analysis-size.ts'
import { Snapshots, type SnapshotMarks } from '../runtime/streams/snapshots.ts'
import { DEFAULT_IMAGE_QUALITY } from '../runtime/system/image-quality.ts'
import { figure, writeReport } from './lib/report.ts'

const { values } = parseArgs({ options: { snapshots: { type: 'string', default: '40' }, rounds: { type: 'string', default: '3' } } })
const SNAPSHOTS = Number(values.snapshots)
const ROUNDS = Number(values.rounds)
const VIDEO = path.resolve(import.meta.dirname, '../../shared/media/one-by-one-person-detection.mp4')
/** The first visitor standing at the table, 10 s into the footage. */
const AT_SECONDS = 10
/** Their box as the person detector put it on the 1280 × 720 copy (test/streams/full-resolution-snapshots.e2e.test.ts's run), as ratios. */
const BOX = { x: 633 / 1280, y: 30 / 720, width: 233 / 1280, height: 620 / 720 }
/** Snapshots per second of one channel on the footage: 6 visits in 139.4 s, an object.entered and an alarm each. */
const SNAPSHOTS_PER_SECOND = 12 / 139.4
const SIZES = [{ width: 1280, height: 720 }, { width: 1920, height: 1080 }]
const ANALYSED = { width: 512, height: 288 }

const binary = ffmpegBinary('')
const log = { warn: () => {}, info: () => {}, error: () => {}, debug: () => {}, child: () => log } as never

/** One frame of the footage at `size`, packed RGB, as a reader delivers it. */
function frameAt(size: { width: number; height: number }, source: { width: number; height: number }): Frame {
  const rgb = execFileSync(binary, ['-v', 'error', '-ss', String(AT_SECONDS), '-i', VIDEO, '-frames:v', '1', '-vf', `scale=${size.width}:${size.height}:flags=area`,
    '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], { maxBuffer: 64 * 1024 * 1024 })
  return { rgb, width: size.width, height: size.height, source, time: 1_000_000, at: 1_000 }
}

/** The alarm.raised overlay (runtime/alarms/raiser.ts: the box and its label; object.entered draws the box alone), in green. */
const overlay = (box: { x: number; y: number; width: number; height: number }) => (picture: Frame): SnapshotMarks => {
  const scaled = inFramePixels(box, picture)
  return { boxes: [{ box: scaled, colour: '#00ff00' }], labels: [{ text: 'person', x: scaled.x + 4, y: scaled.y - 4, colour: '#00ff00' }] }
}

/** Whether the snapshot is at `size` with the box's edges drawn green at their middles. */
async function accurate(jpeg: Buffer, size: { width: number; height: number }, box: { x: number; y: number; width: number; height: number }): Promise<boolean> {
  const { data, info } = await sharp(jpeg).removeAlpha().raw().toBuffer({ resolveWithObject: true })
  if (info.width !== size.width || info.height !== size.height) return false
  const scale = size.width / camera.width
  const b = { x: box.x * scale, y: box.y * scale, width: box.width * scale, height: box.height * scale }
  const green = (x: number, y: number) => {
    const i = (Math.round(y) * info.width + Math.round(x)) * 3
    return data[i + 1]! - Math.max(data[i]!, data[i + 2]!) > 80
  }
  return green(b.x + b.width / 2, b.y) && green(b.x + b.width / 2, b.y + b.height) && green(b.x, b.y + b.height / 2) && green(b.x + b.width, b.y + b.height / 2)
}

let camera = SIZES[0]!
const results: Record<string, { cpuMs: number[]; wallMs: number[]; accurate: number; total: number; bytes: number; personPixels: number }> = {}

for (let round = 0; round < ROUNDS; round++) {
  for (const size of SIZES) {
    camera = size
    const box = { x: Math.round(BOX.x * size.width), y: Math.round(BOX.y * size.height), width: Math.round(BOX.width * size.width), height: Math.round(BOX.height * size.height) }
    const analysed = frameAt(ANALYSED, size)
    const full = frameAt(size, size)
    const settings = {
      [`analysed ${ANALYSED.width}x${ANALYSED.height} of ${size.width}x${size.height}`]: { fullResolution: false, expect: ANALYSED },
      [`full ${size.width}x${size.height}`]: { fullResolution: true, expect: size },
    }
    for (const [name, setting] of Object.entries(settings)) {
      const snapshots = new Snapshots({
        cameras: { fullFrame: async () => ({ frame: full, skewMs: 0 }), armFullFrames: () => {} }, imageQuality: { current: () => structuredClone(DEFAULT_IMAGE_QUALITY) }, log, fullResolution: setting.fullResolution,
      })
      const result = results[name] ??= { cpuMs: [], wallMs: [], accurate: 0, total: 0, bytes: 0, personPixels: 0 }
      // One untimed snapshot: sharp's first use of a size.
      await snapshots.take('camera', analysed, overlay(box))
      const cpu = process.cpuUsage()
      const started = performance.now()
      const jpegs: Buffer[] = []
      for (let i = 0; i < SNAPSHOTS; i++) jpegs.push((await snapshots.take('camera', analysed, overlay(box))).jpeg)
      const used = process.cpuUsage(cpu)
      result.cpuMs.push((used.user + used.system) / 1000 / SNAPSHOTS)
      result.wallMs.push((performance.now() - started) / SNAPSHOTS)
      for (const jpeg of jpegs) if (await accurate(jpeg, setting.expect, box)) result.accurate++
      result.total += jpegs.length
      result.bytes = jpegs[0]!.length
      const s = setting.expect.width / size.width
      result.personPixels = Math.round(box.width * s) * Math.round(box.height * s)
    }
  }
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length
const round2 = (v: number) => Math.round(v * 100) / 100
const summary = Object.fromEntries(Object.entries(results).map(([name, r]) => [name, {
  cpuMsPerSnapshot: round2(mean(r.cpuMs)), wallMsPerSnapshot: round2(mean(r.wallMs)), rounds: r.cpuMs.map(round2),
  accurate: `${r.accurate}/${r.total}`, jpegBytes: r.bytes, personBoxPixels: r.personPixels,
}]))
console.log(JSON.stringify(summary, null, 2))

await writeReport({
  benchmark: 'snapshot-cpu',
  description: 'CPU per object.entered snapshot cut from the camera\'s frame at its own size vs from the analysed frame (512 × 288), same run; and the added CPU per channel at the footage\'s snapshot rate',
  settings: { snapshotsPerRound: SNAPSHOTS, rounds: ROUNDS, jpegQuality: DEFAULT_IMAGE_QUALITY.snapshot.quality, atSeconds: AT_SECONDS, snapshotsPerSecondPerChannel: round2(SNAPSHOTS_PER_SECOND) },
  figures: SIZES.flatMap((size) => {
    const base = summary[`analysed ${ANALYSED.width}x${ANALYSED.height} of ${size.width}x${size.height}`]!
    const full = summary[`full ${size.width}x${size.height}`]!
    return [
      figure({
        name: `CPU per snapshot, ${size.width}x${size.height} camera (accurate ${full.accurate}, baseline ${base.accurate})`, unit: 'ms',
        value: full.cpuMsPerSnapshot, baseline: { name: 'analysed-frame snapshot (512 x 288)', value: base.cpuMsPerSnapshot }, target: { valueAtMost: 250 },
      }),
      figure({
        name: `added CPU per channel, ${size.width}x${size.height} camera, footage rate of snapshots`, unit: '% of one core',
        value: round2((full.cpuMsPerSnapshot - base.cpuMsPerSnapshot) * SNAPSHOTS_PER_SECOND / 10),
        baseline: { name: 'analysed-frame snapshots at the same rate', value: round2(base.cpuMsPerSnapshot * SNAPSHOTS_PER_SECOND / 10) }, target: { valueAtMost: 5 },
      }),
    ]
  }),
  details: summary,
})
