import { describe, expect, it } from 'vitest'
import { buildCase, buildCaseFile, caseIdFor, evidenceDateOf } from '../../bench/capacity/build-case.ts'
import { blockedStep, judgeStep } from '../../bench/capacity/judge.ts'
import { channelSchedule } from '../../bench/capacity/plan.ts'
import { parseStat, processTree } from '../../bench/capacity/resources.ts'
import { summarizeStreamStep, summarizeStreamTask, type ChannelWindow, type FrameCounters } from '../../bench/capacity/stream-measure.ts'
import { checkVisits, compareVisits, type Footage } from '../../bench/capacity/visits.ts'
import type { Gates, StepRecord } from '../../bench/case/schema.ts'
import { createCaseFileValidator } from '../../bench/case/validator.ts'

// The capacity runner's pure parts: from the device's task counters to figures, steps, cases.
const gates: Gates = { minFpsRatio: 0.95, maxMissingRate: 0.01, maxAverageDiscardRate: 0.05, maxCriticalPathLatencyMs: 1000, maxDetectorLatencyMs: 500 }
const peaks = { cpuPeakPercent: 50, memoryPeakPercent: 20, acceleratorPeakPercent: null, acceleratorMemoryPeakPercent: null }
const zero: FrameCounters = { framesIn: 0, framesDropped: 0, framesProcessed: 0, framesFailed: 0, motionSkipped: 0 }

const window = (channel: number, delta: Partial<FrameCounters>, latency: [number | null, number | null] = [60, 120], task: ChannelWindow['task'] = 'person-detector'): ChannelWindow => ({
  task, channel,
  before: { framesIn: 100, framesDropped: 1, framesProcessed: 99, framesFailed: 0, motionSkipped: 10 },
  after: {
    framesIn: 100 + (delta.framesIn ?? 0), framesDropped: 1 + (delta.framesDropped ?? 0), framesProcessed: 99 + (delta.framesProcessed ?? 0),
    framesFailed: delta.framesFailed ?? 0, motionSkipped: 10 + (delta.motionSkipped ?? 0), detectorLatencyP99Ms: latency[0], criticalPathLatencyP99Ms: latency[1],
  },
})

describe('summarizeStreamTask', () => {
  it('takes counter deltas over the hold: slowest channel for fps, missing against targetFps × seconds, drops against frames in, largest p99s', () => {
    // 10 s at 5 fps = 50 expected per channel. Channel 0 kept up; channel 1 got 45 frames, dropped 5, analysed 38, 2 failed.
    const windows = [
      window(0, { framesIn: 50, framesProcessed: 50, motionSkipped: 20 }, [70, 150]),
      window(1, { framesIn: 45, framesDropped: 5, framesProcessed: 38, framesFailed: 2 }, [90, 400]),
    ]
    expect(summarizeStreamTask({ name: 'person-detector', targetFps: 5 }, windows, 10)).toEqual({
      name: 'person-detector',
      targetFps: 5,
      minimumProcessingFps: 3.8,
      minimumFpsRatio: 3.8 / 5,
      missingRate: (0 + (50 - 38 - 5)) / 100,
      averageDiscardRate: 5 / 95,
      maximumDetectorLatencyMs: 90,
      maximumCriticalPathLatencyMs: 400,
    })
  })

  it('counts a silent channel as 0 fps and wholly missing; null latencies when no channel reports one', () => {
    const t = summarizeStreamTask({ name: 'person-detector', targetFps: 5 }, [window(0, {}, [null, null])], 2)
    expect(t).toMatchObject({ minimumProcessingFps: 0, minimumFpsRatio: 0, missingRate: 1, averageDiscardRate: null, maximumDetectorLatencyMs: null, maximumCriticalPathLatencyMs: null })
  })
})

describe('summarizeStreamStep and judgeStep', () => {
  const tasks = [{ name: 'person-detector' as const, targetFps: 1 }, { name: 'no-safety-helmet-analysis' as const, targetFps: 1 }]
  const plan = { channels: 1, holdSeconds: 10, tasks }
  const mixed = (helmetDropped: number) => [
    window(0, { framesIn: 10, framesProcessed: 10 }, [50, 200]),
    window(0, { framesIn: 10, framesDropped: helmetDropped, framesProcessed: 10 - helmetDropped }, [70, 400], 'no-safety-helmet-analysis'),
  ]

  it('aggregates tasks: lowest fps, largest latencies, pooled and worst-channel discard rates, the measured seconds', () => {
    const s = summarizeStreamStep(plan, mixed(5), 10.2, peaks)
    expect(s).toMatchObject({
      channels: 1, holdSeconds: 10.2, minimumProcessingFps: 5 / 10.2, maximumDetectorLatencyMs: 70, maximumCriticalPathLatencyMs: 400,
      averageDiscardRate: 5 / 20, maximumChannelDiscardRate: 0.5, cpuPeakPercent: 50, acceleratorPeakPercent: null,
    })
    expect(s.tasks.map((t) => t.name)).toEqual(['person-detector', 'no-safety-helmet-analysis'])
  })

  it('passes a step that meets every gate and fails one that misses any, naming the gates', () => {
    expect(judgeStep(summarizeStreamStep(plan, mixed(0), 10, peaks), gates)).toMatchObject({ result: 'PASS', failureReason: null })
    const failed = judgeStep(summarizeStreamStep(plan, mixed(5), 10, peaks), gates)
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

describe('channelSchedule', () => {
  it('doubles or increments from the start up to the ceiling, which is always the last step', () => {
    expect(channelSchedule(8, 'double')).toEqual([1, 2, 4, 8])
    expect(channelSchedule(6, 'double')).toEqual([1, 2, 4, 6])
    expect(channelSchedule(3, 'increment')).toEqual([1, 2, 3])
    expect(channelSchedule(5, 'increment', 3)).toEqual([3, 4, 5])
    expect(channelSchedule(1, 'double')).toEqual([1])
    expect(() => channelSchedule(0, 'double')).toThrow(RangeError)
    expect(() => channelSchedule(2, 'double', 3)).toThrow(RangeError)
  })
})

describe('process tree', () => {
  it('reads pid, parent, name with spaces, CPU ticks and RSS from a /proc/<pid>/stat line', () => {
    const line = '4242 (node (sidecar)) S 4200 4242 4200 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 11 0 1000 900000000 5000 18446744073709551615'
    expect(parseStat(line)).toEqual({ pid: 4242, ppid: 4200, comm: 'node (sidecar)', cpuTicks: 300, rssBytes: 5000 * 4096 })
  })

  it('takes the root and everything below it, naming server, sidecar and ffmpeg readers', () => {
    const p = (pid: number, ppid: number, comm: string) => ({ pid, ppid, comm, cpuTicks: 0, rssBytes: 0 })
    const tree = processTree(10, [p(1, 0, 'init'), p(10, 1, 'node'), p(11, 10, 'node'), p(12, 10, 'ffmpeg'), p(13, 12, 'sh'), p(20, 1, 'python3')])
    expect(tree.map((x) => [x.pid, x.role])).toEqual([[10, 'server'], [11, 'sidecar'], [12, 'ffmpeg'], [13, 'other']])
  })
})

describe('visits', () => {
  const footage: Footage = { loopSeconds: 100, visits: [[10, 20], [40, 70]] }
  const s = (seconds: number) => 1_000_000 + seconds * 1000

  it('maps entered events to the visits in view, through the stream\'s start offset and its loops', () => {
    // The stream started at s(0) 50 s into the footage and started over there at s(100).
    const playback = { startedAt: s(0), offsetSeconds: 50, loops: [s(100)] }
    // Hold s(5)..s(130): instances wholly inside: visit 0 at s(60)..s(70), visit 1 at s(90)..s(120); visit 1 of the first pass started before the stream.
    const check = checkVisits(footage, playback, { start: s(5), end: s(130) }, [s(1), s(61), s(30), s(91.5)])
    expect(check).toEqual({ expected: [0, 1], found: [0, 1], missed: [], enteredOutsideVisits: 1 })
    expect(checkVisits(footage, playback, { start: s(5), end: s(130) }, [s(61)]).missed).toEqual([1])
  })

  it('counts a visit the reference found and the candidate expected but did not find, per channel', () => {
    const v = (expected: number[], found: number[]) => ({ expected, found, missed: expected.filter((x) => !found.includes(x)), enteredOutsideVisits: 0 })
    const reference = [{ channel: 0, visits: v([0, 1, 2], [0, 1, 2]) }, { channel: 1, visits: v([0, 1], [0]) }]
    const candidate = [{ channel: 0, visits: v([0, 1], [0]) }, { channel: 1, visits: v([0, 1], [0, 1]) }]
    expect(compareVisits(reference, candidate)).toEqual({ compared: 3, missed: [{ channel: 0, visit: 1 }], notComparable: 1 })
  })
})

describe('buildCase', () => {
  const step = (channels: number, framesProcessed: number): StepRecord => judgeStep(summarizeStreamStep({ channels, holdSeconds: 10, tasks: [{ name: 'person-detector', targetFps: 1 }] },
    Array.from({ length: channels }, (_, c) => ({ task: 'person-detector' as const, channel: c, before: zero, after: { ...zero, framesIn: 10, framesProcessed, detectorLatencyP99Ms: 20, criticalPathLatencyP99Ms: 100 } })), 10, peaks), gates)
  const pass = (channels: number) => step(channels, 10)
  const fail = (channels: number) => step(channels, 5)
  const base = { caseId: 'person-detector-1fps', sourceCaseId: 'person-detector-1fps', workload: 'person-detector' as const, targetFps: 1, configuredChannels: 8, sourceSummarySha256: 'f'.repeat(64), setupBlock: null }
  const validate = createCaseFileValidator()
  const asFile = (c: ReturnType<typeof buildCase>) => buildCaseFile({ platformId: 'linux-x64-2c-24g', platform: 'test', scope: 'additional-experimental-platform', evidenceDate: '2026-11-22', gates, cases: [c] })

  it('turns all-PASS steps into completed / lower-bound, and the file validates as version 3', () => {
    const c = buildCase({ ...base, steps: [pass(1), pass(2), pass(4), pass(8)] })
    expect(c).toMatchObject({ outcome: 'completed', boundaryKind: 'lower-bound', lastPassingChannels: 8, firstBlockedChannels: null, blockedReason: null })
    expect(asFile(c).schemaVersion).toBe(3)
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

  it('writes lastPassingChannels null in a version 4 file when no step passed', () => {
    const c = buildCase({ ...base, steps: [fail(1)] })
    expect(c).toMatchObject({ outcome: 'stopped', lastPassingChannels: null, firstBlockedChannels: 1 })
    expect(asFile(c).schemaVersion).toBe(4)
    expect(validate(asFile(c))).toEqual([])
  })

  it('names cases and dates evidence as spec 2.8 patterns allow', () => {
    expect(caseIdFor('concurrent-mixed', 2.5)).toBe('concurrent-mixed-2-5fps')
    expect(caseIdFor('person-detector', 5, false)).toBe('person-detector-5fps-ungated')
    expect(caseIdFor('person-detector', 5, true, 320)).toBe('person-detector-5fps-in320')
    expect(evidenceDateOf(new Date('2026-11-22T23:59:59Z'))).toBe('2026-11-22')
  })
})
