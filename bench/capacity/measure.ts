import type { TaskName } from '../case/constants.ts'
import type { StepRecord, TaskRecord } from '../case/schema.ts'
import type { FrameRecord, ResourcePeaks } from './frames.ts'

/**
 * From the frames of one step to the per-task and per-step figures of spec 2.8. Pure.
 *
 * Per task, over its channels:
 * - processing fps of a channel = processed frames / holdSeconds; `minimumProcessingFps` is
 *   the lowest channel's, `minimumFpsRatio` = that / the task's targetFps;
 * - `missingRate` = (failed + pending) / offered;
 * - `averageDiscardRate` = discarded / offered (all channels pooled);
 * - `maximumDetectorLatencyMs` = largest detector time of a processed frame;
 * - `maximumCriticalPathLatencyMs` = largest offer → result time of a processed frame.
 * A figure with nothing to measure (no frame offered / processed) is null.
 *
 * Per step: the lowest task fps, the largest latencies, discards pooled over all tasks,
 * `maximumChannelDiscardRate` the worst (task, channel) pair, and the resource peaks.
 */

export interface TaskPlan {
  name: TaskName
  targetFps: number
}

const ratio = (part: number, whole: number) => whole === 0 ? null : part / whole
const maxOf = (xs: number[]) => xs.length === 0 ? null : xs.reduce((a, b) => (b > a ? b : a))
const minOf = (xs: number[]) => xs.length === 0 ? null : xs.reduce((a, b) => (b < a ? b : a))
const nonNull = (xs: (number | null)[]) => xs.filter((x): x is number => x !== null)

interface Counts { offered: number; processed: number; discarded: number; missing: number }

function count(frames: FrameRecord[]): Counts {
  const c: Counts = { offered: frames.length, processed: 0, discarded: 0, missing: 0 }
  for (const f of frames) {
    if (f.fate === 'processed') c.processed++
    else if (f.fate === 'discarded') c.discarded++
    else c.missing++
  }
  return c
}

function byChannel(frames: FrameRecord[], channels: number): FrameRecord[][] {
  const groups: FrameRecord[][] = Array.from({ length: channels }, () => [])
  for (const f of frames) groups[f.channel]?.push(f)
  return groups
}

export function summarizeTask(task: TaskPlan, frames: FrameRecord[], channels: number, holdSeconds: number): TaskRecord {
  const own = frames.filter((f) => f.task === task.name)
  const total = count(own)
  const processed = own.filter((f) => f.fate === 'processed')
  const minimumProcessingFps = minOf(byChannel(own, channels).map((g) => count(g).processed / holdSeconds))
  return {
    name: task.name,
    targetFps: task.targetFps,
    minimumProcessingFps,
    minimumFpsRatio: minimumProcessingFps === null ? null : minimumProcessingFps / task.targetFps,
    missingRate: ratio(total.missing, total.offered),
    averageDiscardRate: ratio(total.discarded, total.offered),
    maximumDetectorLatencyMs: maxOf(nonNull(processed.map((f) => f.detectorLatencyMs))),
    maximumCriticalPathLatencyMs: maxOf(nonNull(processed.map((f) => f.completedAtMs === null ? null : f.completedAtMs - f.offeredAtMs))),
  }
}

/** The measured part of a step; `result` and `failureReason` come from judging it. */
export type StepMeasurement = Omit<StepRecord, 'result' | 'failureReason'>

export function summarizeStep(
  plan: { channels: number; holdSeconds: number; tasks: TaskPlan[] },
  frames: FrameRecord[],
  peaks: ResourcePeaks,
): StepMeasurement {
  const tasks = plan.tasks.map((t) => summarizeTask(t, frames, plan.channels, plan.holdSeconds))
  const all = count(frames)
  const channelDiscardRates = plan.tasks.flatMap((t) =>
    byChannel(frames.filter((f) => f.task === t.name), plan.channels).map((g) => ratio(count(g).discarded, g.length)))
  return {
    channels: plan.channels,
    holdSeconds: plan.holdSeconds,
    tasks,
    minimumProcessingFps: minOf(nonNull(tasks.map((t) => t.minimumProcessingFps))),
    maximumDetectorLatencyMs: maxOf(nonNull(tasks.map((t) => t.maximumDetectorLatencyMs))),
    maximumCriticalPathLatencyMs: maxOf(nonNull(tasks.map((t) => t.maximumCriticalPathLatencyMs))),
    averageDiscardRate: ratio(all.discarded, all.offered),
    maximumChannelDiscardRate: maxOf(nonNull(channelDiscardRates)),
    ...peaks,
  }
}
