/**
 * The tracker when the detector falls behind (docs/cameras-and-stream-tasks.md "Tracking"): the person
 * detector runs in process (the sidecar's engine, bundled as the device builds it) on every
 * frame of one-by-one-person-detection.mp4 at 10 fps, longest side 512; the tracker
 * (runtime/streams/tracker.ts with the task's TRACKING) is then replayed on the frames a
 * 5 fps task sees, with 20, 40 and 60 % of them dropped at random (30 seeded replays each),
 * as a loaded detector sees a camera: sightings 200 ms to seconds apart; and on frames 0.2 to
 * 3.5 s apart at random (60 seeded replays), as a detector whose one waiting frame is replaced
 * by newer ones sees an empty room and the next person walking in.
 * Figures, against the footage's six visits (bench/capacity/visits.ts, counted from its frames):
 * visits split in more than one object (target 0: each split is an extra object.entered and
 * alarm), and visits without an object of their own (missed, or merged with the one before),
 * with the 5 fps replay with nothing dropped as the baseline. Accuracy only, no speed figure.
 * `npx tsx bench/tracker-under-load.bench.ts`
 */
import path from 'node:path'
import { TRACKING } from '../runtime/streams/task-analysis.ts'
import { IouTracker, type Detection } from '../runtime/streams/tracker.ts'
import { footageOf } from './capacity/visits.ts'
import { loadBundledEngine } from './lib/bundled-engine.ts'
import { rgbFrames } from './lib/rgb-frames.ts'
import { figure, writeReport } from './lib/report.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const VIDEO = path.resolve(ROOT, '../shared/media/one-by-one-person-detection.mp4')
const DECODE_FPS = 10
const TASK_EVERY = 2
const DROPS = [0.2, 0.4, 0.6]
const REPLAYS = 30
/** Frames seen at irregular intervals: from 0.2 s to this many seconds apart. */
const MAX_GAP_S = 3.5
const GAP_REPLAYS = 60
/** An object belongs to the visit its first sighting falls in, from 2 s before the listed entry (frames read 2 s apart) to 1 s after the exit. */
const BEFORE_S = 2
const AFTER_S = 1

const { InferenceEngine } = await loadBundledEngine()
const engine = new InferenceEngine({ projectRoot: ROOT, intraOpThreads: 2, limits: { maxEncodedImageBytes: 32 << 20, maxImagePixels: 64_000_000 } })
await engine.load('replay', 'person-detector')
const frames: { time: number; detections: Detection[] }[] = []
for await (const { rgb, width, height } of rgbFrames(VIDEO, DECODE_FPS, 512)) {
  const { result } = await engine.detect({ handle: 'replay', image: { kind: 'rgb', width, height, data: rgb }, overlay: false })
  const detections = result.areaList.flatMap((area) => area.targetList.map((t) => ({ box: t.box, label: t.confidence[0]?.label ?? 'object', confidence: t.confidence[0]?.confidence ?? 0 })))
  frames.push({ time: (frames.length * 1000) / DECODE_FPS, detections })
}
await engine.release('replay')

const { visits } = footageOf(VIDEO)!
/** Objects per visit when the tracker sees the frames `keep` lets through. */
function replay(keep: (index: number) => boolean): number[] {
  const tracker = new IouTracker(TRACKING)
  const firstSeen: number[] = []
  frames.forEach((frame, index) => {
    if (keep(index)) firstSeen.push(...tracker.update(frame.detections, frame.time).entered.map((track) => track.firstSeen / 1000))
  })
  return visits.map(([from, to]) => firstSeen.filter((t) => t >= from - BEFORE_S && t <= to + AFTER_S).length)
}

let seed = 1
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
const atTaskRate = (index: number) => index % TASK_EVERY === 0
const baseline = replay(atTaskRate)
const byDrop = DROPS.map((drop) => {
  const runs = Array.from({ length: REPLAYS }, () => replay((index) => atTaskRate(index) && random() >= drop))
  return { drop, split: runs.flat().filter((n) => n > 1).length, without: runs.flat().filter((n) => n === 0).length, replays: runs.length }
})
const total = (key: 'split' | 'without') => byDrop.reduce((sum, d) => sum + d[key], 0)
const visitReplays = DROPS.length * REPLAYS * visits.length
const gapRuns = Array.from({ length: GAP_REPLAYS }, () => {
  const seen = new Set<number>()
  for (let i = Math.floor(random() * DECODE_FPS); i < frames.length; i += Math.max(1, Math.round((0.2 + random() * (MAX_GAP_S - 0.2)) * DECODE_FPS))) seen.add(i)
  return replay((index) => seen.has(index))
})
const byGaps = { maxGapS: MAX_GAP_S, split: gapRuns.flat().filter((n) => n > 1).length, without: gapRuns.flat().filter((n) => n === 0).length, replays: GAP_REPLAYS }

const file = await writeReport({
  benchmark: 'tracker-under-load',
  description: 'The person tracker on the footage when the detector sees a 5 fps camera\'s frames irregularly (20/40/60 % dropped): visits split or lost against the visits counted from the frames',
  settings: { footage: path.basename(VIDEO), decodeFps: DECODE_FPS, taskFps: DECODE_FPS / TASK_EVERY, drops: DROPS, replaysPerDrop: REPLAYS, maxGapS: MAX_GAP_S, gapReplays: GAP_REPLAYS, tracking: TRACKING, visits },
  figures: [
    figure({ name: 'visits split in more than one object, all dropped-frame replays', unit: 'visits', value: total('split'),
      baseline: { name: `visits split at 5 fps with nothing dropped (of ${visits.length})`, value: baseline.filter((n) => n > 1).length }, target: { valueAtMost: 0 } }),
    figure({ name: `visits without an object of their own, all dropped-frame replays (of ${visitReplays})`, unit: 'visits', value: total('without'),
      baseline: { name: `visits without an object at 5 fps with nothing dropped (of ${visits.length})`, value: baseline.filter((n) => n === 0).length }, target: { valueAtMost: visitReplays * 0.01 } }),
    figure({ name: `visits split, frames 0.2–${MAX_GAP_S} s apart (of ${GAP_REPLAYS * visits.length})`, unit: 'visits', value: byGaps.split,
      baseline: { name: `visits split at 5 fps with nothing dropped (of ${visits.length})`, value: baseline.filter((n) => n > 1).length }, target: { valueAtMost: 0 } }),
    figure({ name: `visits without an object of their own (missed, or merged with the one before), frames 0.2–${MAX_GAP_S} s apart (of ${GAP_REPLAYS * visits.length})`, unit: 'visits', value: byGaps.without,
      baseline: { name: `visits without an object at 5 fps with nothing dropped (of ${visits.length})`, value: baseline.filter((n) => n === 0).length }, target: { valueAtMost: GAP_REPLAYS * visits.length * 0.01 } }),
  ],
  details: { baselineObjectsPerVisit: baseline, byDrop, byGaps },
})
console.log(`wrote ${file}`)
console.log(JSON.stringify({ baseline, byDrop, byGaps }))
