import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runChannels } from '../../bench/capacity/channels.ts'
import { runCapacity, SetupBlockedError, type CapacityOptions, type CapacityTarget } from '../../bench/capacity/run.ts'
import { createCaseFileValidator } from '../../bench/case/validator.ts'

// Unit tests of the capacity runner's control logic with a scripted frame path whose
// per-frame time depends on the step's channel count. Margins are wide (ms of work vs
// hundreds of ms of frame interval) so that timer jitter cannot change a verdict.
let dir: string
beforeAll(async () => { dir = await mkdtemp(path.join(tmpdir(), 'capacity-run-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function scriptedTarget(o: { msPerFrame: (channels: number) => number; blockAt?: number; failEvery?: number }): CapacityTarget<number> & { opened: number[]; closed: number } {
  const t = {
    opened: [] as number[],
    closed: 0,
    frames: (_task: string, _channel: number, k: number) => k,
    async open(_tasks: string[], channels: number) {
      if (channels === o.blockAt) throw new SetupBlockedError({ boundaryKind: 'binding-blocked', reason: `cannot bind ${channels} channels` })
      t.opened.push(channels)
      const ms = o.msPerFrame(channels)
      return {
        async analyze(_task: string, _channel: number, k: number) {
          await sleep(ms)
          if (o.failEvery && k % o.failEvery === o.failEvery - 1) throw new Error('scripted failure')
          return { detectorLatencyMs: ms / 2 }
        },
        async close() { t.closed++ },
      }
    },
  }
  return t as never
}

const options = (over: Partial<CapacityOptions>): CapacityOptions => ({
  workload: 'person-detector', targetFps: 10, maxChannels: 4, holdSeconds: 0.5, stepMode: 'double',
  queueDepth: 1, drainTimeoutMs: 2_000, scope: 'additional-experimental-platform', outDir: dir,
  gates: { minFpsRatio: 0.95, maxMissingRate: 0.01, maxAverageDiscardRate: 0.05, maxCriticalPathLatencyMs: 1000, maxDetectorLatencyMs: 500 },
  startedAt: new Date('2026-11-22T01:00:00Z'),
  ...over,
})

describe('runChannels', () => {
  it('processes every offered frame when the path keeps up', async () => {
    const target = scriptedTarget({ msPerFrame: () => 2 })
    const p = await target.open(['person-detector'], 2)
    const frames = await runChannels(p, { channels: 2, holdSeconds: 0.5, tasks: [{ name: 'person-detector', targetFps: 10 }], queueDepth: 1, drainTimeoutMs: 2_000 }, target.frames)
    expect(frames).toHaveLength(10)
    expect(frames.filter((f) => f.fate === 'processed')).toHaveLength(10)
    expect(frames.filter((f) => f.channel === 1)).toHaveLength(5)
  })

  it('discards frames that find the queue full and counts failures', async () => {
    const slow = scriptedTarget({ msPerFrame: () => 400 })
    const p = await slow.open(['person-detector'], 1)
    // Offers at 0,100,200,300,400 ms; frame 0 busy until ~400, frame 1 queued: 2 and 3 must be discarded.
    const frames = await runChannels(p, { channels: 1, holdSeconds: 0.5, tasks: [{ name: 'person-detector', targetFps: 10 }], queueDepth: 1, drainTimeoutMs: 3_000 }, slow.frames)
    expect(frames).toHaveLength(5)
    expect(frames.filter((f) => f.fate === 'discarded').length).toBeGreaterThanOrEqual(2)
    expect(frames[0]!.fate).toBe('processed')

    const failing = scriptedTarget({ msPerFrame: () => 1, failEvery: 2 })
    const q = await failing.open(['person-detector'], 1)
    const mixed = await runChannels(q, { channels: 1, holdSeconds: 0.4, tasks: [{ name: 'person-detector', targetFps: 10 }], queueDepth: 1, drainTimeoutMs: 2_000 }, failing.frames)
    expect(mixed.map((f) => f.fate)).toEqual(['processed', 'failed', 'processed', 'failed'])
  })

  it('leaves frames unfinished at the drain deadline pending', async () => {
    const stuck = { analyze: () => new Promise<never>(() => {}) }
    const frames = await runChannels(stuck, { channels: 1, holdSeconds: 0.2, tasks: [{ name: 'person-detector', targetFps: 10 }], queueDepth: 5, drainTimeoutMs: 50 }, () => 0)
    expect(frames.map((f) => f.fate)).toEqual(['pending', 'pending'])
  })
})

describe('runCapacity', () => {
  const validate = createCaseFileValidator()

  it('stops at the first failing step and writes a summary and a valid case file that hashes it', async () => {
    const target = scriptedTarget({ msPerFrame: (channels) => (channels >= 4 ? 400 : 2) })
    const r = await runCapacity(target, options({ outDir: path.join(dir, 'stopped') }))
    expect(r.error).toBeNull()
    expect(r.steps.map((s) => [s.channels, s.result])).toEqual([[1, 'PASS'], [2, 'PASS'], [4, 'FAIL']])
    expect(target.closed).toBe(3)
    const written = JSON.parse(await readFile(r.caseFile!, 'utf8'))
    expect(validate(written)).toEqual([])
    expect(written.cases[0]).toMatchObject({ caseId: 'person-detector-10fps', outcome: 'stopped', boundaryKind: 'performance-stop', lastPassingChannels: 2, firstBlockedChannels: 4, configuredChannels: 4 })
    expect(written.evidenceDate).toBe('2026-11-22')
    const summaryBytes = await readFile(r.summaryFile)
    expect(written.cases[0].sourceSummarySha256).toBe(createHash('sha256').update(summaryBytes).digest('hex'))
    const schema = JSON.parse(await readFile(path.join(dir, 'stopped', 'capacity-cases.schema.json'), 'utf8'))
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema')
  })

  it('completes at the ceiling as a lower bound, with two tasks per step for concurrent-mixed', async () => {
    const r = await runCapacity(scriptedTarget({ msPerFrame: () => 2 }), options({ workload: 'concurrent-mixed', maxChannels: 2, outDir: path.join(dir, 'mixed') }))
    expect(r.error).toBeNull()
    expect(r.caseFileJson!.cases[0]).toMatchObject({ outcome: 'completed', boundaryKind: 'lower-bound', lastPassingChannels: 2, firstBlockedChannels: null })
    expect(r.steps.every((s) => s.tasks.length === 2)).toBe(true)
    expect(r.violations).toEqual([])
  })

  it('reports setup-blocked with the kind and reason when a step cannot be set up', async () => {
    const r = await runCapacity(scriptedTarget({ msPerFrame: () => 2, blockAt: 2 }), options({ outDir: path.join(dir, 'blocked') }))
    expect(r.caseFileJson!.cases[0]).toMatchObject({ outcome: 'setup-blocked', boundaryKind: 'binding-blocked', blockedReason: 'cannot bind 2 channels', lastPassingChannels: 1, firstBlockedChannels: 2 })
    expect(r.violations).toEqual([])
  })

  it('writes only the summary when not even one channel passes', async () => {
    const r = await runCapacity(scriptedTarget({ msPerFrame: () => 400 }), options({ maxChannels: 2, outDir: path.join(dir, 'none') }))
    expect(r.caseFile).toBeNull()
    expect(r.error).toContain('no step passed')
    expect(JSON.parse(await readFile(r.summaryFile, 'utf8')).judged).toHaveLength(1)
  })
})
