import type { TaskName } from '../case/constants.ts'
import type { TaskRecord } from '../case/schema.ts'
import type { StepMeasurement } from './judge.ts'
import type { StepPlan, TaskPlan } from './plan.ts'
import type { ResourcePeaks } from './resources.ts'

/**
 * From what the device reports for its stream tasks (QueryTaskStatus / Task/page) at the
 * start and at the end of a step's hold to the figures of spec 2.8. Pure.
 *
 * Per channel, over the hold (`seconds` between the two reports), with Δ the change of a
 * counter: expected = targetFps × seconds (the frames the channel should analyse).
 * - processing fps = Δ framesProcessed / seconds (motion-skipped frames count: they were
 *   handled in time); `minimumFpsRatio` = the slowest channel's / targetFps;
 * - missing = expected − Δ framesProcessed − Δ framesDropped, at least 0: frames neither
 *   analysed nor discarded — not delivered in time by the camera reader, failed, or still
 *   in flight; `missingRate` = Σ missing / Σ expected over the task's channels;
 * - `averageDiscardRate` = Σ Δ framesDropped / Σ Δ framesIn (the bounded queue's drops of
 *   the frames delivered, as the device's own discardRate);
 * - latencies: the device keeps each task's last 512 frames; the figures are the largest
 *   channel's p99 (detector: the sidecar call, without the wait for the task's turn; critical path:
 *   frame decoded → analysed, its events queued).
 * Per step: the lowest task fps, the largest latencies, drops pooled over all tasks,
 * `maximumChannelDiscardRate` the worst channel, and the device's resource peaks.
 */

export interface FrameCounters {
  framesIn: number
  framesDropped: number
  framesProcessed: number
  framesFailed: number
  motionSkipped: number
}

export interface ChannelWindow {
  task: TaskName
  /** 0-based channel index. */
  channel: number
  before: FrameCounters
  after: FrameCounters & { detectorLatencyP99Ms: number | null; criticalPathLatencyP99Ms: number | null }
}

export interface ChannelFigures {
  task: TaskName
  channel: number
  expected: number
  framesIn: number
  processed: number
  dropped: number
  failed: number
  motionSkipped: number
  missing: number
  processingFps: number
  discardRate: number | null
}

const maxOf = (xs: number[]) => xs.length === 0 ? null : Math.max(...xs)
const minOf = (xs: number[]) => xs.length === 0 ? null : Math.min(...xs)
const nonNull = (xs: (number | null)[]) => xs.filter((x): x is number => x !== null)
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
const ratio = (part: number, whole: number) => whole === 0 ? null : part / whole

export function channelFigures(w: ChannelWindow, targetFps: number, seconds: number): ChannelFigures {
  const d = (k: keyof FrameCounters) => w.after[k] - w.before[k]
  const expected = targetFps * seconds
  const processed = d('framesProcessed')
  const dropped = d('framesDropped')
  return {
    task: w.task, channel: w.channel, expected,
    framesIn: d('framesIn'), processed, dropped, failed: d('framesFailed'), motionSkipped: d('motionSkipped'),
    missing: Math.max(0, expected - processed - dropped),
    processingFps: processed / seconds,
    discardRate: ratio(dropped, d('framesIn')),
  }
}

export function summarizeStreamTask(task: TaskPlan, windows: ChannelWindow[], seconds: number): TaskRecord {
  const own = windows.filter((w) => w.task === task.name)
  const figures = own.map((w) => channelFigures(w, task.targetFps, seconds))
  const minimumProcessingFps = minOf(figures.map((f) => f.processingFps))
  return {
    name: task.name,
    targetFps: task.targetFps,
    minimumProcessingFps,
    minimumFpsRatio: minimumProcessingFps === null ? null : minimumProcessingFps / task.targetFps,
    missingRate: ratio(sum(figures.map((f) => f.missing)), sum(figures.map((f) => f.expected))),
    averageDiscardRate: ratio(sum(figures.map((f) => f.dropped)), sum(figures.map((f) => f.framesIn))),
    maximumDetectorLatencyMs: maxOf(nonNull(own.map((w) => w.after.detectorLatencyP99Ms))),
    maximumCriticalPathLatencyMs: maxOf(nonNull(own.map((w) => w.after.criticalPathLatencyP99Ms))),
  }
}

export function summarizeStreamStep(plan: StepPlan, windows: ChannelWindow[], seconds: number, peaks: ResourcePeaks): StepMeasurement {
  const tasks = plan.tasks.map((t) => summarizeStreamTask(t, windows, seconds))
  const figures = windows.map((w) => channelFigures(w, plan.tasks.find((t) => t.name === w.task)!.targetFps, seconds))
  return {
    channels: plan.channels,
    holdSeconds: seconds,
    tasks,
    minimumProcessingFps: minOf(nonNull(tasks.map((t) => t.minimumProcessingFps))),
    maximumDetectorLatencyMs: maxOf(nonNull(tasks.map((t) => t.maximumDetectorLatencyMs))),
    maximumCriticalPathLatencyMs: maxOf(nonNull(tasks.map((t) => t.maximumCriticalPathLatencyMs))),
    averageDiscardRate: ratio(sum(figures.map((f) => f.dropped)), sum(figures.map((f) => f.framesIn))),
    maximumChannelDiscardRate: maxOf(nonNull(figures.map((f) => f.discardRate))),
    ...peaks,
  }
}
