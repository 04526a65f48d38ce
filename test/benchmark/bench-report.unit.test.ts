import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { figure, readReport, reportErrors, writeReport } from '../../bench/lib/report.ts'
import { summaryMarkdown } from '../../bench/lib/summary.ts'

// The per-benchmark report contract (bench/lib/report.ts) and the summary table.
let dir: string
beforeAll(async () => { dir = await mkdtemp(path.join(tmpdir(), 'bench-report-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

describe('figure', () => {
  it('computes the ratio to the baseline and passes a ratioAtLeast target on or above it', () => {
    const f = figure({ name: 'throughput', unit: 'req/s', value: 300, baseline: { name: 'bare', value: 1200 }, target: { ratioAtLeast: 0.25 } })
    expect(f.ratio).toBe(0.25)
    expect(f.pass).toBe(true)
    expect(figure({ ...f, value: 299 }).pass).toBe(false)
  })

  it('fails a ratioAtMost target above it, and any ratio target when the baseline is 0', () => {
    expect(figure({ name: 'p99', unit: 'ms', value: 9, baseline: { name: 'bare', value: 2 }, target: { ratioAtMost: 4 } }))
      .toMatchObject({ ratio: 4.5, pass: false })
    expect(figure({ name: 'p99', unit: 'ms', value: 1, baseline: { name: 'bare', value: 0 }, target: { ratioAtMost: 4 } }))
      .toMatchObject({ ratio: null, pass: false })
  })

  it('checks value bounds on the figure itself, also when the baseline is 0', () => {
    expect(figure({ name: 'events lost', unit: 'events', value: 0, baseline: { name: 'plain mqtt', value: 0 }, target: { valueAtMost: 0 } }))
      .toMatchObject({ ratio: null, pass: true })
    expect(figure({ name: 'events lost', unit: 'events', value: 3, baseline: { name: 'plain mqtt', value: 0 }, target: { valueAtMost: 0 } }).pass).toBe(false)
    const rate = { name: 'rate', unit: 'events/s', baseline: { name: 'plain mqtt', value: 2000 }, target: { valueAtLeast: 1960, ratioAtLeast: 0.9 } }
    expect(figure({ ...rate, value: 1900 }).pass).toBe(false)
    expect(figure({ ...rate, value: 1990 }).pass).toBe(true)
  })
})

describe('report files', () => {
  it('writes bench/out/<name>.json with machine and timestamp, and reads it back', async () => {
    const fig = figure({ name: 'throughput', unit: 'MB/s', value: 80, baseline: { name: 'disk copy', value: 100 }, target: { ratioAtLeast: 0.5 } })
    const file = await writeReport({ benchmark: 'upload-throughput', description: 'Chunked upload vs a plain file copy', settings: { bytes: 1 }, figures: [fig] }, dir)
    expect(path.basename(file)).toBe('upload-throughput.json')
    const report = await readReport(file)
    expect(report.figures).toEqual([fig])
    expect(report.machine.platformId).toMatch(/^[a-z0-9-]+$/)
    expect(JSON.parse(await readFile(file, 'utf8')).benchmark).toBe('upload-throughput')
  })

  it('refuses a malformed report', async () => {
    await expect(writeReport({ benchmark: 'Bad Name', description: 'x', settings: {}, figures: [] }, dir)).rejects.toThrow(/malformed/)
    expect(reportErrors({ benchmark: 'x' })).not.toEqual([])
  })
})

describe('summary table', () => {
  it('has one row per figure with value, baseline, ratio, target and verdict, and a row per failed benchmark', () => {
    const ok = figure({ name: 'throughput', unit: 'req/s', value: 500, baseline: { name: 'bare hono', value: 2000 }, target: { ratioAtLeast: 0.25 } })
    const md = summaryMarkdown({
      generatedAt: '2026-11-22T00:00:00.000Z',
      machine: { platformId: 'linux-x64-2c-24g', platform: 'test machine' },
      benchmarks: [
        { benchmark: 'http-overhead', file: 'bench/http-overhead.bench.ts', exitCode: 0, error: null,
          report: { benchmark: 'http-overhead', description: 'd', measuredAt: '', machine: { platformId: 'p', platform: 'p' }, settings: {}, figures: [ok] } },
        { benchmark: 'events', file: 'bench/events.bench.ts', exitCode: 1, error: 'exited with code 1', report: null },
      ],
    })
    expect(md).toContain('| benchmark | figure | value | baseline | ratio | target | pass |')
    expect(md).toContain('| http-overhead | throughput | 500 req/s | 2000 req/s (bare hono) | 0.25 | ratio ≥ 0.25 | yes |')
    expect(md).toContain('| events | – | – | – | – | – | error: exited with code 1 |')
  })
})

describe('summary table targets', () => {
  it('prints value bounds with the unit', () => {
    const lost = figure({ name: 'events lost', unit: 'events', value: 0, baseline: { name: 'plain mqtt', value: 0 }, target: { valueAtMost: 0 } })
    const md = summaryMarkdown({
      generatedAt: 'now', machine: { platformId: 'p', platform: 'p' },
      benchmarks: [{ benchmark: 'events', file: 'bench/events.bench.mjs', exitCode: 0, error: null,
        report: { benchmark: 'events', description: 'd', measuredAt: '', machine: { platformId: 'p', platform: 'p' }, settings: {}, figures: [lost] } }],
    })
    expect(md).toContain('| events | events lost | 0 events | 0 events (plain mqtt) | – | ≤ 0 events | yes |')
  })
})

describe('summary number format', () => {
  it('keeps integers whole and gives four significant digits to fractions', async () => {
    const { num } = await import('../../bench/lib/summary.ts')
    expect([num(1750), num(1750.1), num(12345.67), num(0.25), num(0.0376), num(8.1179), num(42.7), num(null)])
      .toEqual(['1750', '1750', '12346', '0.25', '0.0376', '8.118', '42.7', '–'])
  })
})
