/**
 * Detection on motion regions replayed on the footage (docs/cameras-and-stream-tasks.md
 * "Detection on motion regions"): every frame of one-by-one-person-detection.mp4 as a
 * person-detector stream task reads it (5 fps, longest side 512) goes through the task's
 * motion check, gate, crops (runtime/streams/regions.ts), the person detector in process
 * (the sidecar's engine, bundled as the device builds it, one intra-op thread) and tracker,
 * with a clock of the frames' own times. Four replays in the same run:
 * - every frame, whole (the floor of accuracy: the visits it finds are the reference);
 * - motion gating, whole frames (the baseline: today's default);
 * - motion gating with region detection, without and with the counter line of the
 *   integration test (x = 0.7, which follows walkers at the frame rate).
 * Figures: the person visits found with every frame that a region replay missed (target 0),
 * its object.entered events (target: no more than with every frame), the counter crossings;
 * the detector's inferences per frame (each a 512 × 512 tensor: its work, independent of the
 * machine's load) and its measured time per processed frame (every frame of the footage counts,
 * skipped ones included) against the gated whole-frame replay, as channels per core at 5 fps
 * (1000 ms / (5 × detector ms per frame)). Run under `flock /work/bench.lock` (speed figures);
 * the measured times follow the machine's load (quoted in the settings), the inferences do not.
 * `npx tsx bench/region-detection.bench.ts`
 */
import { loadavg } from 'node:os'
import path from 'node:path'
import { decide, type GateSettings } from '../runtime/streams/gating.ts'
import { follow, type LineState } from '../runtime/streams/line-crossing.ts'
import { MotionDetector, type Motion } from '../runtime/streams/motion.ts'
import { cropsFor, detectCrops, REGION_DEFAULTS } from '../runtime/streams/regions.ts'
import { TRACKING } from '../runtime/streams/task-analysis.ts'
import { IouTracker, type Detection } from '../runtime/streams/tracker.ts'
import type { DetectionResultCore } from '../shared/inference/types.ts'
import { DEFAULT_TRACKED_DETECT_INTERVAL_MS } from '../shared/streams/types.ts'
import { footageOf } from './capacity/visits.ts'
import { loadBundledEngine } from './lib/bundled-engine.ts'
import { rgbFrames } from './lib/rgb-frames.ts'
import { figure, writeReport } from './lib/report.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const VIDEO = path.resolve(ROOT, '../shared/media/one-by-one-person-detection.mp4')
const FPS = 5
const MAX_SIDE = 512
/** The person detector's input side (models/manifests/person-detector.json). */
const INPUT_SIDE = 512
const GATE = { minDetectIntervalMs: 1000, trackedDetectIntervalMs: DEFAULT_TRACKED_DETECT_INTERVAL_MS, followWalkers: false }
const EXIT_LINE = { from: { x: 0.7, y: 1 }, to: { x: 0.7, y: 0 } }
/** A visit's events may come up to 2 s either side of its listed span (the table was read from one frame every 2 s). */
const SLACK_S = 2

interface Frame { time: number; rgb: Buffer; motion: Motion }

/** Every frame of the footage at the task's rate and size, with its motion. */
async function readFrames(): Promise<{ frames: Frame[]; width: number; height: number }> {
  const motion = new MotionDetector()
  const frames: Frame[] = []
  let size = { width: 0, height: 0 }
  for await (const { rgb, width, height } of rgbFrames(VIDEO, FPS, MAX_SIDE)) {
    size = { width, height }
    const time = frames.length * (1000 / FPS)
    frames.push({ time, rgb, motion: motion.detect(rgb, width, height, time) })
  }
  return { frames, ...size }
}

const { InferenceEngine } = await loadBundledEngine()
const engine = new InferenceEngine({ projectRoot: ROOT, intraOpThreads: 1, limits: { maxEncodedImageBytes: 32 << 20, maxImagePixels: 64_000_000 } })
await engine.load('replay', 'person-detector')

interface Replay {
  entered: number[]; crossings: number[]; detectedFrames: number; regionFrames: number; cutFrames: number; inferences: number; detectorMs: number; inferenceMs: number[]
}

/** The task's frame path (runtime/streams/task-analysis.ts process) over the frames: gate (null: every frame), crops (regions on), detector, tracker, counter line. */
async function replay(frames: Frame[], size: { width: number; height: number }, gate: GateSettings | null, regions: boolean): Promise<Replay> {
  const tracker = new IouTracker(TRACKING)
  const sides = new Map<string, LineState | undefined>()
  const out: Replay = { entered: [], crossings: [], detectedFrames: 0, regionFrames: 0, cutFrames: 0, inferences: 0, detectorMs: 0, inferenceMs: [] }
  let lastDetectAt = -Infinity
  let lastWholeAt = -Infinity
  const detect = async (image: { kind: 'rgb'; width: number; height: number; data: Uint8Array }): Promise<DetectionResultCore> => {
    const started = performance.now()
    const data = Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength)
    const { result } = await engine.detect({ handle: 'replay', image: { ...image, data }, overlay: false })
    const ms = performance.now() - started
    out.inferences++
    out.detectorMs += ms
    out.inferenceMs.push(ms)
    return result
  }
  for (const frame of frames) {
    const { time, motion } = frame
    let crops = null
    if (gate) {
      const tracked = tracker.predict(time).map(({ track, box }) => ({ box, confirmed: track.confirmed }))
      const decision = decide(motion, tracked, time - lastDetectAt, gate)
      if (!decision.detect) continue
      crops = cropsFor({
        side: regions ? INPUT_SIDE : null, reason: decision.reason, sinceWholeMs: time - lastWholeAt, minDetectIntervalMs: gate.minDetectIntervalMs,
        motion: motion.regions.map((r) => r.box), tracked: tracked.map((t) => t.box), frame: size,
      })
    }
    lastDetectAt = time
    out.detectedFrames++
    let found = crops ? await detectCrops(detect, { rgb: frame.rgb, ...size }, crops) : null
    if (found) out.regionFrames++
    else {
      if (crops) out.cutFrames++
      found = await detect({ kind: 'rgb', ...size, data: frame.rgb })
      lastWholeAt = time
    }
    const detections: Detection[] = found.areaList.flatMap((area) => area.targetList.map((t) => ({ box: t.box, label: t.confidence[0]?.label ?? 'object', confidence: t.confidence[0]?.confidence ?? 0 })))
    out.entered.push(...tracker.update(detections, time).entered.map(() => time))
    for (const track of tracker.objects) {
      const point = { x: (track.box.x + track.box.width / 2) / size.width, y: (track.box.y + track.box.height / 2) / size.height }
      const { state, crossing } = follow(EXIT_LINE.from, EXIT_LINE.to, sides.get(track.id), point)
      sides.set(track.id, state)
      if (crossing) out.crossings.push(time)
    }
  }
  return out
}

const footage = footageOf(VIDEO)!
/** The visits (indices) with an event in their span. */
const visitsWith = (times: number[]) => footage.visits.flatMap(([walksIn, hasLeft], visit) =>
  times.some((t) => t / 1000 >= walksIn - SLACK_S && t / 1000 <= hasLeft + SLACK_S) ? [visit] : [])
const missing = (reference: number[], candidate: number[]) => reference.filter((visit) => !candidate.includes(visit))
const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0

const loadBefore = loadavg()
const { frames, width, height } = await readFrames()
const size = { width, height }
const every = await replay(frames, size, null, false)
const gated = await replay(frames, size, GATE, false)
const regions = await replay(frames, size, GATE, true)
const counting = await replay(frames, size, { ...GATE, followWalkers: true }, true)
const loadAfter = loadavg()
await engine.release('replay')

const found = { every: visitsWith(every.entered), gated: visitsWith(gated.entered), regions: visitsWith(regions.entered), counting: visitsWith(counting.entered) }
const crossed = { every: visitsWith(every.crossings), counting: visitsWith(counting.crossings) }
const missed = missing(found.every, found.regions).length + missing(found.every, found.counting).length
const perFrame = (r: Replay) => r.detectorMs / frames.length
const channelsPerCore = (r: Replay) => 1000 / (FPS * perFrame(r))
const summary = (r: Replay) => ({
  detectedShare: r.detectedFrames / frames.length, regionFrames: r.regionFrames, cutFrames: r.cutFrames, inferences: r.inferences,
  detectorMsPerFrame: perFrame(r), inferenceP50Ms: p50(r.inferenceMs), channelsPerCore: channelsPerCore(r),
  entered: r.entered.length, enteredSeconds: r.entered.map((t) => t / 1000), crossings: r.crossings.length,
})

const file = await writeReport({
  benchmark: 'region-detection',
  description: 'A person-detector stream task on the footage with detection on motion regions vs whole frames (motion gating on), replayed in process with the real detector: person visits found against every frame, detector time per processed frame',
  settings: {
    footage: path.basename(VIDEO), fps: FPS, frames: frames.length, frameSize: `${width}x${height}`, detectorInputSide: INPUT_SIDE, intraOpThreads: 1,
    gate: GATE, regions: REGION_DEFAULTS, tracking: TRACKING, counterLine: EXIT_LINE,
    loadAverage: { before: loadBefore, after: loadAfter }, note: 'other helpers share the 2 cores; run under flock /work/bench.lock',
  },
  figures: [
    figure({ name: 'person visits found with every frame that region detection missed (task without and with the counter line)', unit: 'visits',
      value: missed, baseline: { name: 'visits found with every frame, whole', value: found.every.length }, target: { valueAtMost: 0 } }),
    figure({ name: 'object.entered events with region detection, the more of the two region replays', unit: 'events',
      value: Math.max(regions.entered.length, counting.entered.length), baseline: { name: 'every frame, whole', value: every.entered.length }, target: { ratioAtMost: 1 } }),
    figure({ name: 'counter crossings found with every frame that region detection (with the line) missed', unit: 'visits',
      value: missing(crossed.every, crossed.counting).length, baseline: { name: 'crossings found with every frame', value: crossed.every.length }, target: { valueAtMost: 0 } }),
    // Every inference of the person detector is a 512 × 512 tensor (a crop is resized to it as the whole frame is letterboxed):
    // the detector's work per frame is its inferences per frame, the same on any machine and under any load.
    figure({ name: 'detector inferences (512 × 512 tensors) per frame of the footage, motion gating with region detection', unit: 'inferences per frame',
      value: regions.inferences / frames.length, baseline: { name: 'motion gating, whole frames (same run)', value: gated.inferences / frames.length }, target: { ratioAtMost: 1 } }),
    figure({ name: 'detector time per frame of the footage, motion gating with region detection', unit: 'ms',
      value: perFrame(regions), baseline: { name: 'motion gating, whole frames (same run)', value: perFrame(gated) }, target: { ratioAtMost: 1 } }),
    figure({ name: 'channels per core at 5 fps by the detector\'s time, motion gating with region detection', unit: 'channels',
      value: channelsPerCore(regions), baseline: { name: 'motion gating, whole frames (same run)', value: channelsPerCore(gated) }, target: { ratioAtLeast: 1 } }),
  ],
  details: {
    every: summary(every), gated: summary(gated), regions: summary(regions), countingWithRegions: summary(counting),
    visitsFound: found, crossingsFound: crossed,
  },
})
console.log(`wrote ${file}`)
console.log(JSON.stringify({ every: summary(every), gated: summary(gated), regions: summary(regions), counting: summary(counting), found, crossed }, (k, v) => (k === 'enteredSeconds' ? undefined : v), 1))
