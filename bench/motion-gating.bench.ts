/**
 * Motion gating replayed on the footage, without a clock or a load (docs/cameras-and-stream-tasks.md "Stream tasks"):
 * every frame of one-by-one-person-detection.mp4 as a person-detector stream task reads it
 * (5 fps, longest side 512, the reader's ffmpeg filter) goes once through the person detector
 * in process and once through the motion check; then the task's gate, tracker and a counter
 * line (the integration test's exit line, x = 0.7) replay those frames: with every frame to the
 * detector, and with motion gating (the detector's result used only on the frames the gate lets
 * through) for a task without counter lines, as the capacity run's, and for one with the line
 * (which follows walkers at the frame rate). Figures: the share of frames the detector ran on
 * without counter lines (target ≤ 1/3 of every frame: the detector work behind the capacity
 * target of 3×); the person visits, and their counter crossings, that the replay with every
 * frame found and a gated one missed (target 0); the object.entered events (target: no more
 * than with every frame); and, in its details, the same replay with the gate's intervals swept
 * (`intervalSweep`). The capacity run (capacity.bench.ts) measures the machine; this
 * checks the gate itself, the same on any machine. Boxes stay in the analysed frame's pixels (the task scales them to the
 * camera's and back; the tracker's thresholds are ratios). `npx tsx bench/motion-gating.bench.ts`
 */
import path from 'node:path'
import { decide, type GateSettings } from '../runtime/streams/gating.ts'
import { follow, type LineState } from '../runtime/streams/line-crossing.ts'
import { MotionDetector, type Motion } from '../runtime/streams/motion.ts'
import { TRACKING } from '../runtime/streams/task-analysis.ts'
import { IouTracker, type Detection } from '../runtime/streams/tracker.ts'
import { DEFAULT_TRACKED_DETECT_INTERVAL_MS } from '../shared/streams/types.ts'
import { footageOf } from './capacity/visits.ts'
import { loadBundledEngine } from './lib/bundled-engine.ts'
import { rgbFrames } from './lib/rgb-frames.ts'
import { figure, writeReport } from './lib/report.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const VIDEO = path.resolve(ROOT, '../shared/media/one-by-one-person-detection.mp4')
const FPS = 5
const MAX_SIDE = 512
const GATE = { minDetectIntervalMs: 1000, trackedDetectIntervalMs: DEFAULT_TRACKED_DETECT_INTERVAL_MS, followWalkers: false }
const EXIT_LINE = { from: { x: 0.7, y: 1 }, to: { x: 0.7, y: 0 } }
/** A visit's events may come up to 2 s either side of its listed span (the table was read from one frame every 2 s). */
const SLACK_S = 2

interface Analysed { time: number; motion: Motion; detections: Detection[] }

/** Every frame of the footage at the task's rate and size: its motion and the detector's persons. */
async function analyse(): Promise<{ frames: Analysed[]; width: number; height: number; detectMs: number }> {
  const { InferenceEngine } = await loadBundledEngine()
  const engine = new InferenceEngine({ projectRoot: ROOT, intraOpThreads: 1, limits: { maxEncodedImageBytes: 32 << 20, maxImagePixels: 64_000_000 } })
  await engine.load('replay', 'person-detector')
  const motion = new MotionDetector()
  const frames: Analysed[] = []
  let size = { width: 0, height: 0 }
  let detectMs = 0
  for await (const { rgb, width, height } of rgbFrames(VIDEO, FPS, MAX_SIDE)) {
    size = { width, height }
    const time = frames.length * (1000 / FPS)
    const started = performance.now()
    const outcome = await engine.detect({ handle: 'replay', image: { kind: 'rgb', width, height, data: rgb }, overlay: false })
    detectMs += performance.now() - started
    frames.push({
      time, motion: motion.detect(rgb, width, height, time),
      detections: outcome.result.areaList.flatMap((area) => area.targetList.map((t) => ({ box: t.box, label: t.confidence[0]?.label ?? 'object', confidence: t.confidence[0]?.confidence ?? 0 }))),
    })
  }
  await engine.release('replay')
  return { frames, ...size, detectMs: detectMs / frames.length }
}

/** The task's frame path over the analysed frames: gate (null: every frame), tracker, counter line. */
function replay(frames: Analysed[], size: { width: number; height: number }, gate: GateSettings | null) {
  const tracker = new IouTracker(TRACKING)
  const sides = new Map<string, LineState | undefined>()
  const entered: number[] = []
  const crossings: number[] = []
  const reasons: Record<string, number> = {}
  let lastDetectAt = -Infinity
  let detected = 0
  for (const { time, motion, detections } of frames) {
    if (gate) {
      const decision = decide(motion, tracker.predict(time).map(({ track, box }) => ({ box, confirmed: track.confirmed })), time - lastDetectAt, gate)
      reasons[decision.reason] = (reasons[decision.reason] ?? 0) + 1
      if (!decision.detect) continue
    }
    lastDetectAt = time
    detected++
    entered.push(...tracker.update(detections, time).entered.map(() => time))
    for (const track of tracker.objects) {
      const point = { x: (track.box.x + track.box.width / 2) / size.width, y: (track.box.y + track.box.height / 2) / size.height }
      const { state, crossing } = follow(EXIT_LINE.from, EXIT_LINE.to, sides.get(track.id), point)
      sides.set(track.id, state)
      if (crossing) crossings.push(time)
    }
  }
  return { detectedShare: detected / frames.length, entered, crossings, reasons }
}

const footage = footageOf(VIDEO)!
/** The visits (indices) with an event in their span. */
const visitsWith = (times: number[]) => footage.visits.flatMap(([walksIn, hasLeft], visit) =>
  times.some((t) => t / 1000 >= walksIn - SLACK_S && t / 1000 <= hasLeft + SLACK_S) ? [visit] : [])
const missing = (reference: number[], candidate: number[]) => reference.filter((visit) => !candidate.includes(visit))

const { frames, width, height, detectMs } = await analyse()
const size = { width, height }
const every = replay(frames, size, null)
const gated = replay(frames, size, GATE)
const counting = replay(frames, size, { ...GATE, followWalkers: true })
const found = { every: visitsWith(every.entered), gated: visitsWith(gated.entered), counting: visitsWith(counting.entered) }
const crossed = { every: visitsWith(every.crossings), gated: visitsWith(gated.crossings), counting: visitsWith(counting.crossings) }
// The counter line's crossings are the counting task's to find; every gated replay must find the visits.
const missed = missing(found.every, found.gated).length + missing(found.every, found.counting).length + missing(crossed.every, crossed.counting).length

// The gate's intervals swept (not a target): what the detector's share and the visits found do when objects are looked at less often.
const sweep = [[1000, 1000], [3000, 1000], [3000, 1500], [3000, 2000]].map(([minDetectIntervalMs, trackedDetectIntervalMs]) => {
  const replayed = replay(frames, size, { ...GATE, minDetectIntervalMs: minDetectIntervalMs!, trackedDetectIntervalMs: trackedDetectIntervalMs! })
  return { minDetectIntervalMs, trackedDetectIntervalMs, detectedShare: replayed.detectedShare, entered: replayed.entered.length, visitsMissed: missing(found.every, visitsWith(replayed.entered)).length }
})

const file = await writeReport({
  benchmark: 'motion-gating',
  description: 'Share of the footage\'s frames a person-detector stream task sends to the detector with motion gating, replayed without a clock, vs every frame; the visits and counter crossings found',
  settings: { footage: path.basename(VIDEO), fps: FPS, frames: frames.length, frameSize: `${width}x${height}`, gate: GATE, tracking: TRACKING, counterLine: EXIT_LINE },
  figures: [
    figure({ name: 'frames sent to the detector, motion gating on, no counter lines', unit: 'share of frames', value: gated.detectedShare,
      baseline: { name: 'motion gating off (every frame)', value: every.detectedShare }, target: { ratioAtMost: 1 / 3 } }),
    figure({ name: 'person visits (both gated replays) and counter crossings (the one with the line) found with every frame that were missed', unit: 'visits',
      value: missed, baseline: { name: 'visits and crossings found with every frame', value: found.every.length + crossed.every.length }, target: { valueAtMost: 0 } }),
    figure({ name: 'object.entered events, motion gating on, the more of the two gated replays (a walker split in two would add one)', unit: 'events',
      value: Math.max(gated.entered.length, counting.entered.length), baseline: { name: 'motion gating off (every frame)', value: every.entered.length }, target: { ratioAtMost: 1 } }),
  ],
  details: {
    detectorMsPerFrame: detectMs, detectedShareWithCounterLine: counting.detectedShare,
    gateReasons: { gated: gated.reasons, counting: counting.reasons },
    intervalSweep: sweep,
    visitsFound: found, crossingsFound: crossed,
    enteredSeconds: { every: every.entered.map((t) => t / 1000), gated: gated.entered.map((t) => t / 1000), counting: counting.entered.map((t) => t / 1000) },
  },
})
console.log(`wrote ${file}`)
