import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { StepPlan } from '../../bench/capacity/plan.ts'
import { runCapacity, SetupBlockedError, type CapacityOptions, type CapacityTarget } from '../../bench/capacity/run.ts'
import { summarizeStreamStep, type ChannelWindow } from '../../bench/capacity/stream-measure.ts'
import { createCaseFileValidator } from '../../bench/case/validator.ts'

// The capacity runner's control logic with a scripted target: each step's channels report
// counters as the device would, processing `fpsAt(channels)` frames per second.
let dir: string
beforeAll(async () => { dir = await mkdtemp(path.join(tmpdir(), 'capacity-run-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

const peaks = { cpuPeakPercent: 40, memoryPeakPercent: 3, acceleratorPeakPercent: null, acceleratorMemoryPeakPercent: null }

function scriptedTarget(o: { fpsAt: (channels: number) => number; blockAt?: number }): CapacityTarget & { ran: number[] } {
  const ran: number[] = []
  return {
    ran,
    async runStep(plan: StepPlan) {
      if (plan.channels === o.blockAt) throw new SetupBlockedError({ boundaryKind: 'binding-blocked', reason: `cannot bind ${plan.channels} channels` })
      ran.push(plan.channels)
      const processed = o.fpsAt(plan.channels) * plan.holdSeconds
      const windows: ChannelWindow[] = plan.tasks.flatMap((t) => Array.from({ length: plan.channels }, (_, channel) => ({
        task: t.name, channel,
        before: { framesIn: 0, framesDropped: 0, framesProcessed: 0, framesFailed: 0, motionSkipped: 0 },
        after: { framesIn: t.targetFps * plan.holdSeconds, framesDropped: 0, framesProcessed: processed, framesFailed: 0, motionSkipped: 0, detectorLatencyP99Ms: 50, criticalPathLatencyP99Ms: 90 },
      })))
      return { measurement: summarizeStreamStep(plan, windows, plan.holdSeconds, peaks), evidence: { scripted: true } }
    },
  }
}

const options = (over: Partial<CapacityOptions>): CapacityOptions => ({
  caseId: 'person-detector-10fps', workload: 'person-detector', targetFps: 10, minChannels: 1, maxChannels: 4, holdSeconds: 10, stepMode: 'double',
  scope: 'additional-experimental-platform', outDir: dir, settings: { video: 'x.mp4' },
  gates: { minFpsRatio: 0.95, maxMissingRate: 0.01, maxAverageDiscardRate: 0.05, maxCriticalPathLatencyMs: 1000, maxDetectorLatencyMs: 500 },
  startedAt: new Date('2026-11-22T01:00:00Z'),
  ...over,
})

describe('runCapacity', () => {
  const validate = createCaseFileValidator()

  it('stops at the first failing step and writes a summary and a valid case file that hashes it', async () => {
    const target = scriptedTarget({ fpsAt: (channels) => (channels >= 4 ? 6 : 10) })
    const r = await runCapacity(target, options({ outDir: path.join(dir, 'stopped') }))
    expect(r.violations).toEqual([])
    expect(r.steps.map((s) => [s.channels, s.result])).toEqual([[1, 'PASS'], [2, 'PASS'], [4, 'FAIL']])
    expect(r.steps[2]!.failureReason).toContain('minFpsRatio')
    const written = JSON.parse(await readFile(r.caseFile, 'utf8'))
    expect(validate(written)).toEqual([])
    expect(written.schemaVersion).toBe(3)
    expect(written.cases[0]).toMatchObject({ caseId: 'person-detector-10fps', outcome: 'stopped', boundaryKind: 'performance-stop', lastPassingChannels: 2, firstBlockedChannels: 4, configuredChannels: 4 })
    expect(written.evidenceDate).toBe('2026-11-22')
    const summaryBytes = await readFile(r.summaryFile)
    expect(written.cases[0].sourceSummarySha256).toBe(createHash('sha256').update(summaryBytes).digest('hex'))
    const summary = JSON.parse(summaryBytes.toString())
    expect(summary.settings).toMatchObject({ video: 'x.mp4', minChannels: 1, maxChannels: 4 })
    expect(summary.steps.map((s: { evidence: unknown }) => s.evidence)).toEqual([{ scripted: true }, { scripted: true }, { scripted: true }])
    const schema = JSON.parse(await readFile(path.join(dir, 'stopped', 'capacity-cases.schema.json'), 'utf8'))
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema')
  })

  it('steps +1 from --min-channels and completes at the ceiling, with two tasks per step for concurrent-mixed', async () => {
    const target = scriptedTarget({ fpsAt: () => 10 })
    const r = await runCapacity(target, options({ workload: 'concurrent-mixed', minChannels: 2, maxChannels: 4, stepMode: 'increment', outDir: path.join(dir, 'mixed') }))
    expect(target.ran).toEqual([2, 3, 4])
    expect(r.caseFileJson.cases[0]).toMatchObject({ outcome: 'completed', boundaryKind: 'lower-bound', lastPassingChannels: 4, firstBlockedChannels: null })
    expect(r.steps.every((s) => s.tasks.length === 2)).toBe(true)
    expect(r.violations).toEqual([])
  })

  it('reports setup-blocked with the kind and reason when a step cannot be set up', async () => {
    const r = await runCapacity(scriptedTarget({ fpsAt: () => 10, blockAt: 2 }), options({ outDir: path.join(dir, 'blocked') }))
    expect(r.caseFileJson.cases[0]).toMatchObject({ outcome: 'setup-blocked', boundaryKind: 'binding-blocked', blockedReason: 'cannot bind 2 channels', lastPassingChannels: 1, firstBlockedChannels: 2 })
    expect(r.violations).toEqual([])
  })

  it('writes a schemaVersion 4 case with lastPassingChannels null when no step passed', async () => {
    const blocked = await runCapacity(scriptedTarget({ fpsAt: () => 10, blockAt: 1 }), options({ outDir: path.join(dir, 'none-blocked') }))
    expect(blocked.caseFileJson.schemaVersion).toBe(4)
    expect(blocked.caseFileJson.cases[0]).toMatchObject({ outcome: 'setup-blocked', lastPassingChannels: null, firstBlockedChannels: 1, blockedReason: 'cannot bind 1 channels' })
    expect(blocked.violations).toEqual([])
    const failed = await runCapacity(scriptedTarget({ fpsAt: () => 1 }), options({ maxChannels: 2, outDir: path.join(dir, 'none-failed') }))
    expect(failed.caseFileJson).toMatchObject({ schemaVersion: 4, cases: [{ outcome: 'stopped', boundaryKind: 'performance-stop', lastPassingChannels: null, firstBlockedChannels: 1 }] })
    expect(failed.violations).toEqual([])
  })
})
