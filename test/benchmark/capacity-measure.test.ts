import { describe, expect, it } from 'vitest'
import { buildCase, buildCaseFile, caseIdFor, evidenceDateOf, NoPassingStepError } from '../../bench/capacity/build-case.ts'
import type { FrameRecord } from '../../bench/capacity/frames.ts'
import { blockedStep, judgeStep } from '../../bench/capacity/judge.ts'
import { summarizeStep, summarizeTask } from '../../bench/capacity/measure.ts'
import { channelSchedule } from '../../bench/capacity/plan.ts'
import { offerTimesMs } from '../../bench/capacity/channels.ts'
import type { Gates, StepRecord } from '../../bench/case/schema.ts'
import { createCaseFileValidator } from '../../bench/case/validator.ts'

// The capacity runner's pure parts: from per-frame records to figures, steps, cases.
const gates: Gates = { minFpsRatio: 0.95, maxMissingRate: 0.01, maxAverageDiscardRate: 0.05, maxCriticalPathLatencyMs: 1000, maxDetectorLatencyMs: 500 }
const noPeaks = { cpuPeakPercent: 50, memoryPeakPercent: 20, acceleratorPeakPercent: null, acceleratorMemoryPeakPercent: null }

const frame = (channel: number, offeredAtMs: number, fate: FrameRecord['fate'], latency = 0, detector: number | null = null): FrameRecord => ({
  task: 'person-detector', channel, offeredAtMs, fate,
  completedAtMs: fate === 'processed' || fate === 'failed' ? offeredAtMs + latency : null,
  detectorLatencyMs: detector,
})

describe('summarizeTask', () => {
  it('takes the slowest channel for fps, pools discards and missing frames, and the largest latencies', () => {
    // 2 s hold at 2 fps: channel 0 processed 4 of 4; channel 1 processed 2, discarded 1, failed 1.
    const frames = [
      frame(0, 0, 'processed', 100, 40), frame(0, 500, 'processed', 120, 45), frame(0, 1000, 'processed', 90, 30), frame(0, 1500, 'processed', 300, 80),
      frame(1, 250, 'processed', 150, 50), frame(1, 750, 'discarded'), frame(1, 1250, 'failed', 10), frame(1, 1750, 'processed', 200, 60),
    ]
    expect(summarizeTask({ name: 'person-detector', targetFps: 2 }, frames, 2, 2)).toEqual({
      name: 'person-detector',
      targetFps: 2,
      minimumProcessingFps: 1, // channel 1: 2 processed / 2 s
      minimumFpsRatio: 0.5,
      missingRate: 1 / 8,
      averageDiscardRate: 1 / 8,
      maximumDetectorLatencyMs: 80,
      maximumCriticalPathLatencyMs: 300,
    })
  })

  it('counts a channel that offered nothing processed as 0 fps, and gives null figures when nothing was offered', () => {
    expect(summarizeTask({ name: 'person-detector', targetFps: 5 }, [frame(0, 0, 'processed', 10, 5)], 2, 1).minimumProcessingFps).toBe(0)
    expect(summarizeTask({ name: 'person-detector', targetFps: 5 }, [], 1, 1)).toMatchObject({
      minimumProcessingFps: 0, minimumFpsRatio: 0, missingRate: null, averageDiscardRate: null, maximumDetectorLatencyMs: null, maximumCriticalPathLatencyMs: null,
    })
  })
})

describe('summarizeStep and judgeStep', () => {
  const tasks = [{ name: 'person-detector' as const, targetFps: 1 }, { name: 'no-safety-helmet-analysis' as const, targetFps: 1 }]
  const mixed = (helmetFate: FrameRecord['fate']): FrameRecord[] => [
    frame(0, 0, 'processed', 200, 50),
    { ...frame(0, 0, helmetFate, 400, 70), task: 'no-safety-helmet-analysis' },
  ]

  it('aggregates tasks: lowest fps, largest latencies, pooled and worst-channel discard rates', () => {
    const s = summarizeStep({ channels: 1, holdSeconds: 1, tasks }, mixed('discarded'), noPeaks)
    expect(s).toMatchObject({
      minimumProcessingFps: 0, maximumDetectorLatencyMs: 50, maximumCriticalPathLatencyMs: 200,
      averageDiscardRate: 0.5, maximumChannelDiscardRate: 1, cpuPeakPercent: 50, acceleratorPeakPercent: null,
    })
    expect(s.tasks.map((t) => t.name)).toEqual(['person-detector', 'no-safety-helmet-analysis'])
  })

  it('passes a step that meets every gate and fails one that misses any, naming the gates', () => {
    expect(judgeStep(summarizeStep({ channels: 1, holdSeconds: 1, tasks }, mixed('processed'), noPeaks), gates)).toMatchObject({ result: 'PASS', failureReason: null })
    const failed = judgeStep(summarizeStep({ channels: 1, holdSeconds: 1, tasks }, mixed('discarded'), noPeaks), gates)
    expect(failed.result).toBe('FAIL')
    expect(failed.failureReason).toContain('minFpsRatio')
    expect(failed.failureReason).toContain('maxAverageDiscardRate')
  })

  it('builds a STOP step with null figures for a step that could not be set up', () => {
    const s = blockedStep({ channels: 4, holdSeconds: 5, tasks }, 'no storage')
    expect(s).toMatchObject({ channels: 4, result: 'STOP', failureReason: 'no storage', cpuPeakPercent: null })
    expect(s.tasks.every((t) => t.minimumFpsRatio === null)).toBe(true)
  })
})

describe('channelSchedule and offer times', () => {
  it('doubles or increments up to the ceiling, which is always the last step', () => {
    expect(channelSchedule(8, 'double')).toEqual([1, 2, 4, 8])
    expect(channelSchedule(6, 'double')).toEqual([1, 2, 4, 6])
    expect(channelSchedule(3, 'increment')).toEqual([1, 2, 3])
    expect(channelSchedule(1, 'double')).toEqual([1])
    expect(() => channelSchedule(0, 'double')).toThrow(RangeError)
  })

  it('offers targetFps × holdSeconds frames per channel, channels staggered within one interval', () => {
    expect(offerTimesMs(5, 0, 2, 1)).toEqual([0, 200, 400, 600, 800])
    expect(offerTimesMs(5, 1, 2, 1)).toEqual([100, 300, 500, 700, 900])
  })
})

describe('buildCase', () => {
  const pass = (channels: number): StepRecord => judgeStep(summarizeStep({ channels, holdSeconds: 1, tasks: [{ name: 'person-detector', targetFps: 1 }] },
    Array.from({ length: channels }, (_, c) => frame(c, 0, 'processed', 100, 20)), noPeaks), gates)
  const fail = (channels: number): StepRecord => judgeStep(summarizeStep({ channels, holdSeconds: 1, tasks: [{ name: 'person-detector', targetFps: 1 }] },
    Array.from({ length: channels }, (_, c) => frame(c, 0, 'discarded')), noPeaks), gates)
  const base = { caseId: 'person-detector-1fps', sourceCaseId: 'person-detector-1fps', workload: 'person-detector' as const, targetFps: 1, configuredChannels: 8, sourceSummarySha256: 'f'.repeat(64), setupBlock: null }
  const validate = createCaseFileValidator()
  const asFile = (c: ReturnType<typeof buildCase>) => buildCaseFile({ platformId: 'linux-x64-2c-24g', platform: 'test', scope: 'additional-experimental-platform', evidenceDate: '2026-11-22', gates, cases: [c] })

  it('turns all-PASS steps into completed / lower-bound, and the file validates', () => {
    const c = buildCase({ ...base, steps: [pass(1), pass(2), pass(4), pass(8)] })
    expect(c).toMatchObject({ outcome: 'completed', boundaryKind: 'lower-bound', lastPassingChannels: 8, firstBlockedChannels: null, blockedReason: null })
    expect(validate(asFile(c))).toEqual([])
  })

  it('turns a final FAIL step into stopped / performance-stop, and the file validates', () => {
    const c = buildCase({ ...base, steps: [pass(1), pass(2), fail(4)] })
    expect(c).toMatchObject({ outcome: 'stopped', boundaryKind: 'performance-stop', lastPassingChannels: 2, firstBlockedChannels: 4 })
    expect(validate(asFile(c))).toEqual([])
  })

  it('turns a final STOP step into setup-blocked with its kind and reason, and the file validates', () => {
    const stop = blockedStep({ channels: 2, holdSeconds: 1, tasks: [{ name: 'person-detector', targetFps: 1 }] }, 'disk below reserve')
    const c = buildCase({ ...base, steps: [pass(1), stop], setupBlock: { boundaryKind: 'storage-blocked', reason: 'disk below reserve' } })
    expect(c).toMatchObject({ outcome: 'setup-blocked', boundaryKind: 'storage-blocked', blockedReason: 'disk below reserve', lastPassingChannels: 1, firstBlockedChannels: 2 })
    expect(validate(asFile(c))).toEqual([])
  })

  it('refuses a run in which no step passed, since lastPassingChannels must be >= 1', () => {
    expect(() => buildCase({ ...base, steps: [fail(1)] })).toThrow(NoPassingStepError)
  })

  it('names cases and dates evidence as spec 2.8 patterns allow', () => {
    expect(caseIdFor('concurrent-mixed', 2.5)).toBe('concurrent-mixed-2-5fps')
    expect(caseIdFor('person-detector', 5)).toMatch(/^[a-z0-9-]+$/)
    expect(evidenceDateOf(new Date('2026-11-22T23:59:59Z'))).toBe('2026-11-22')
  })
})
