import { gateMisses } from '../case/gates.ts'
import type { Gates, StepRecord } from '../case/schema.ts'
import type { StepPlan } from './plan.ts'

/** The measured part of a step; `result` and `failureReason` come from judging it. */
export type StepMeasurement = Omit<StepRecord, 'result' | 'failureReason'>

/**
 * A step passes when it meets every gate (spec 2.8), judged by the same `gateMisses` the
 * validator uses, so a PASS step written by the runner always validates. A FAIL step's
 * `failureReason` lists every gate it missed.
 */
export function judgeStep(step: StepMeasurement, gates: Gates): StepRecord {
  const misses = gateMisses(step, gates)
  return misses.length === 0
    ? { ...step, result: 'PASS', failureReason: null }
    : { ...step, result: 'FAIL', failureReason: misses.map((m) => m.message).join('; ') }
}

/** A step that could not be run: its channels could not be set up (spec 3.3: setup-blocked). */
export function blockedStep(plan: StepPlan, reason: string): StepRecord {
  return {
    channels: plan.channels,
    holdSeconds: plan.holdSeconds,
    result: 'STOP',
    tasks: plan.tasks.map((t) => ({
      name: t.name, targetFps: t.targetFps,
      minimumProcessingFps: null, minimumFpsRatio: null, missingRate: null, averageDiscardRate: null,
      maximumDetectorLatencyMs: null, maximumCriticalPathLatencyMs: null,
    })),
    minimumProcessingFps: null, maximumDetectorLatencyMs: null, maximumCriticalPathLatencyMs: null,
    averageDiscardRate: null, maximumChannelDiscardRate: null,
    acceleratorPeakPercent: null, acceleratorMemoryPeakPercent: null, cpuPeakPercent: null, memoryPeakPercent: null,
    failureReason: reason,
  }
}
