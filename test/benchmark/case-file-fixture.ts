import { BENCHMARK_TITLE, CASE_SCHEMA_REF } from '../../bench/case/constants.ts'
import type { CaseFile, StepRecord, TaskRecord } from '../../bench/case/schema.ts'

/**
 * A hand-written valid case file (spec 2.8): a person-detector run that passes 1 and 2
 * channels and fails its gates at 4, and a concurrent-mixed run that reaches its ceiling of
 * 2 channels. Each call returns a fresh copy the test may break.
 */
const task = (name: TaskRecord['name'], over: Partial<TaskRecord> = {}): TaskRecord => ({
  name,
  targetFps: 5,
  minimumProcessingFps: 4.9,
  minimumFpsRatio: 0.98,
  missingRate: 0,
  averageDiscardRate: 0.01,
  maximumDetectorLatencyMs: 120,
  maximumCriticalPathLatencyMs: 300,
  ...over,
})

const step = (channels: number, result: StepRecord['result'], tasks: TaskRecord[], over: Partial<StepRecord> = {}): StepRecord => ({
  channels,
  holdSeconds: 10,
  result,
  tasks,
  minimumProcessingFps: 4.9,
  maximumDetectorLatencyMs: 120,
  maximumCriticalPathLatencyMs: 300,
  averageDiscardRate: 0.01,
  maximumChannelDiscardRate: 0.02,
  acceleratorPeakPercent: null,
  acceleratorMemoryPeakPercent: null,
  cpuPeakPercent: 80,
  memoryPeakPercent: 12.5,
  failureReason: null,
  ...over,
})

export function validCaseFile(): CaseFile {
  return {
    $schema: CASE_SCHEMA_REF,
    schemaVersion: 3,
    benchmark: BENCHMARK_TITLE,
    platformId: 'linux-x64-2-core',
    platform: 'Linux x64, 2 cores, 24 GiB, no accelerator',
    scope: 'additional-experimental-platform',
    evidenceDate: '2026-11-22',
    caseCount: 2,
    gates: {
      minFpsRatio: 0.95,
      maxMissingRate: 0.01,
      maxAverageDiscardRate: 0.05,
      maxCriticalPathLatencyMs: 1000,
      maxDetectorLatencyMs: 500,
    },
    cases: [
      {
        caseId: 'person-detector-5fps',
        sourceCaseId: 'person-detector-5fps',
        workload: 'person-detector',
        targetFps: 5,
        configuredChannels: 8,
        outcome: 'stopped',
        boundaryKind: 'performance-stop',
        lastPassingChannels: 2,
        firstBlockedChannels: 4,
        blockedReason: null,
        sourceSummarySha256: 'a'.repeat(64),
        steps: [
          step(1, 'PASS', [task('person-detector')]),
          step(2, 'PASS', [task('person-detector')]),
          step(4, 'FAIL', [task('person-detector', { minimumProcessingFps: 3.1, minimumFpsRatio: 0.62, averageDiscardRate: 0.3 })], {
            minimumProcessingFps: 3.1, averageDiscardRate: 0.3, maximumChannelDiscardRate: 0.35,
            failureReason: 'minFpsRatio: task person-detector minimumFpsRatio 0.62 < 0.95',
          }),
        ],
      },
      {
        caseId: 'concurrent-mixed-2fps',
        sourceCaseId: 'concurrent-mixed-2fps',
        workload: 'concurrent-mixed',
        targetFps: 2,
        configuredChannels: 2,
        outcome: 'completed',
        boundaryKind: 'lower-bound',
        lastPassingChannels: 2,
        firstBlockedChannels: null,
        blockedReason: null,
        sourceSummarySha256: '0123456789abcdef'.repeat(4),
        steps: [
          step(1, 'PASS', [task('person-detector', { targetFps: 2 }), task('no-safety-helmet-analysis', { targetFps: 2 })]),
          step(2, 'PASS', [task('person-detector', { targetFps: 2 }), task('no-safety-helmet-analysis', { targetFps: 2 })]),
        ],
      },
    ],
  }
}

/** A valid file changed by `mutate` (tests break one rule at a time). */
export function brokenCaseFile(mutate: (f: Record<string, any>) => void): Record<string, any> {
  const f = validCaseFile() as Record<string, any>
  mutate(f)
  return f
}
