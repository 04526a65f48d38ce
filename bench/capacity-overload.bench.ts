/**
 * Capacity with every task started at once, and overload at twice that (docs/cameras-and-
 * stream-tasks.md "Detector scheduling"): person-detector stream tasks at 5 fps with motion
 * gating on the office footage, one RTSP camera per channel (bench/capacity/stream-target.ts),
 * a step's tasks all created back to back (as a device resumes them after a restart).
 *
 *   figure:   the device's default (STREAM_DETECT_SLOTS=2: two stream detections at a time,
 *             the tasks served in turn);
 *   baseline: the same run with STREAM_DETECT_SLOTS=0 (one detection per task at once, the
 *             previous configuration), the same channel counts, measured in the same run.
 * Each configuration runs two steps: C channels (BENCH_OVERLOAD_CHANNELS, 6) and 2C. Figures:
 * at 2C, how far the slowest and fastest channels' processed fps are from their mean (target
 * ±20 %), the total detections per second at 2C against C (target ≥ 1), the gates of spec 2.8
 * at C (summaries, case files under bench/out/capacity-overload/), and accuracy beside them:
 * the footage's person visits each channel saw whole in the hold and found (one
 * `object.entered` per visit, bench/capacity/visits.ts), at each step.
 *
 * Settings (environment): BENCH_OVERLOAD_CHANNELS (6), BENCH_OVERLOAD_HOLD_SECONDS (90),
 * BENCH_OVERLOAD_WARMUP_SECONDS (5), BENCH_OVERLOAD_SLOTS (2: the figure's STREAM_DETECT_SLOTS). Run: `npx tsx bench/capacity-overload.bench.ts` (under
 * `flock /work/bench.lock` on a shared machine) → bench/out/capacity-overload.json.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { DEFAULT_ALGORITHM_BY_TASK } from './capacity/algorithms.ts'
import { DEFAULT_GATES, DEFAULT_RUN } from './capacity/defaults.ts'
import { judgeStep } from './capacity/judge.ts'
import { openStreamTarget, type StreamStepEvidence } from './capacity/stream-target.ts'
import { BENCH_OUT_DIR, figure, writeReport } from './lib/report.ts'

const env = (name: string, fallback: string) => Number(process.env[`BENCH_OVERLOAD_${name}`] ?? fallback)
const CHANNELS = env('CHANNELS', '6')
const HOLD = env('HOLD_SECONDS', '90')
const WARMUP = env('WARMUP_SECONDS', '5')
const FPS = 5
const OUT = path.join(BENCH_OUT_DIR, 'capacity-overload')
const SLOTS = String(env('SLOTS', '2'))
const CONFIGS = [
  { name: 'previous: one detection per task at once (STREAM_DETECT_SLOTS=0)', env: { STREAM_DETECT_SLOTS: '0' } },
  { name: `scheduled: ${SLOTS} stream detection(s) at a time, tasks in turn (STREAM_DETECT_SLOTS=${SLOTS})`, env: { STREAM_DETECT_SLOTS: SLOTS } },
]

interface StepFigures {
  channels: number
  seconds: number
  result: string
  failureReason: string | null
  processedFps: number[]
  detectionsPerSecond: number
  motionSkippedShare: number
  droppedShare: number
  detectorP50Ms: (number | null)[]
  criticalPathP99Ms: number | null
  visitsExpected: number
  visitsFound: number
  enteredOutsideVisits: number
  loadAverage: unknown
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)

async function measure(config: typeof CONFIGS[number]): Promise<StepFigures[]> {
  const target = await openStreamTarget({
    video: DEFAULT_RUN.video, maxChannels: 2 * CHANNELS, motionGating: true, warmupSeconds: WARMUP,
    algorithms: DEFAULT_ALGORITHM_BY_TASK, helmetClassifier: null, deviceEnv: config.env,
  })
  const steps: StepFigures[] = []
  try {
    for (const channels of [CHANNELS, 2 * CHANNELS]) {
      const outcome = await target.runStep({ channels, holdSeconds: HOLD, tasks: [{ name: 'person-detector', targetFps: FPS }] })
      const step = judgeStep(outcome.measurement, DEFAULT_GATES)
      const e = outcome.evidence as StreamStepEvidence
      const ch = e.channels
      const processed = sum(ch.map((c) => c.figures.processed))
      const figures: StepFigures = {
        channels, seconds: e.window.seconds, result: step.result, failureReason: step.failureReason,
        processedFps: ch.map((c) => c.figures.processingFps),
        detectionsPerSecond: sum(ch.map((c) => c.figures.processed - c.figures.motionSkipped)) / e.window.seconds,
        motionSkippedShare: sum(ch.map((c) => c.figures.motionSkipped)) / Math.max(1, processed),
        droppedShare: sum(ch.map((c) => c.figures.dropped)) / Math.max(1, sum(ch.map((c) => c.figures.framesIn))),
        detectorP50Ms: ch.map((c) => c.after.detectorLatencyP50Ms),
        criticalPathP99Ms: step.maximumCriticalPathLatencyMs,
        visitsExpected: sum(ch.map((c) => c.visits?.expected.length ?? 0)),
        visitsFound: sum(ch.map((c) => c.visits?.found.length ?? 0)),
        enteredOutsideVisits: sum(ch.map((c) => c.visits?.enteredOutsideVisits ?? 0)),
        loadAverage: e.resources.loadAverage,
      }
      steps.push(figures)
      await mkdir(OUT, { recursive: true })
      await writeFile(path.join(OUT, `slots${config.env.STREAM_DETECT_SLOTS}-${channels}ch.evidence.json`), JSON.stringify({ config, step, evidence: e }, null, 2) + '\n')
      console.log(`${config.name}, ${channels} ch: ${step.result}, detections/s ${figures.detectionsPerSecond.toFixed(2)}, processed fps ${figures.processedFps.map((f) => f.toFixed(2)).join(' ')}, ` +
        `motion-skipped ${(figures.motionSkippedShare * 100).toFixed(0)} %, dropped ${(figures.droppedShare * 100).toFixed(0)} %, visits ${figures.visitsFound}/${figures.visitsExpected}`)
    }
  } finally {
    await target.close()
  }
  return steps
}

const loadAverageAtStart = os.loadavg()
interface ConfigResult { config: string; env: Record<string, string>; steps: StepFigures[] }
const results: ConfigResult[] = []
for (const config of CONFIGS) results.push({ config: config.name, env: config.env, steps: await measure(config) })
const [previous, current] = results as [ConfigResult, ConfigResult]
const spread = (s: StepFigures) => {
  const mean = sum(s.processedFps) / s.processedFps.length
  return Math.max(...s.processedFps.map((f) => Math.abs(f - mean) / mean))
}
const at = (r: ConfigResult, channels: number) => r.steps.find((s) => s.channels === channels)!
const file = await writeReport({
  benchmark: 'capacity-overload',
  description: `Person-detector stream tasks at 5 fps, all started at once, at ${CHANNELS} and ${2 * CHANNELS} channels: ${SLOTS} stream detection(s) at a time vs one per task (previous)`,
  settings: { channels: [CHANNELS, 2 * CHANNELS], holdSeconds: HOLD, warmupSeconds: WARMUP, targetFps: FPS, motionGating: true, footage: path.basename(DEFAULT_RUN.video), gates: DEFAULT_GATES, loadAverageAtStart, loadAverageAtEnd: os.loadavg() },
  figures: [
    figure({ name: `largest deviation of a channel's processed fps from the mean at ${2 * CHANNELS} channels`, unit: 'share of the mean', value: spread(at(current, 2 * CHANNELS)),
      baseline: { name: 'the same, previous configuration', value: spread(at(previous, 2 * CHANNELS)) }, target: { valueAtMost: 0.2 } }),
    figure({ name: `detections per second at ${2 * CHANNELS} channels`, unit: 'detections/s', value: at(current, 2 * CHANNELS).detectionsPerSecond,
      baseline: { name: `the same configuration at ${CHANNELS} channels`, value: at(current, CHANNELS).detectionsPerSecond }, target: { ratioAtLeast: 1 } }),
    figure({ name: `detections per second at ${2 * CHANNELS} channels, against the previous configuration`, unit: 'detections/s', value: at(current, 2 * CHANNELS).detectionsPerSecond,
      baseline: { name: 'previous configuration, same channels', value: at(previous, 2 * CHANNELS).detectionsPerSecond }, target: { ratioAtLeast: 1 } }),
    figure({ name: 'person visits seen whole in the holds and missed (both steps)', unit: 'visits',
      value: sum(current.steps.map((s) => s.visitsExpected - s.visitsFound)),
      baseline: { name: 'visits seen whole in the holds (both steps)', value: sum(current.steps.map((s) => s.visitsExpected)) }, target: { valueAtMost: 0 } }),
  ],
  details: { results },
})
console.log(`wrote ${file}`)
