import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Type, type Static } from '@sinclair/typebox'
import { checkSchema, formatIssue } from '../../shared/schema/validate.ts'
import { describeMachine } from './machine.ts'

/**
 * The per-benchmark report contract. Every `bench/<name>.bench.{ts,mjs}` measures its figure
 * and the baseline it is compared to in the same run, then calls `writeReport()`, which
 * writes `bench/out/<name>.json`. `bench/run-all.ts` reads these files into the summary.
 *
 * @example
 * await writeReport({
 *   benchmark: 'http-overhead',
 *   description: 'Authenticated small JSON route vs a bare hono route',
 *   settings: { connections: 10, durationSeconds: 5 },
 *   figures: [figure({
 *     name: 'requests per second', unit: 'req/s', value: 8000,
 *     baseline: { name: 'bare hono route', value: 20000 },
 *     target: { ratioAtLeast: 0.25 },
 *   })],
 * })
 */

export const BENCH_DIR = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
export const BENCH_OUT_DIR = path.join(BENCH_DIR, 'out')

/**
 * Bounds on the ratio figure / baseline (figures of any unit compare alike) and, where the
 * requirement is absolute (a latency ceiling, no lost events), on the value itself.
 */
const Target = Type.Object({
  ratioAtLeast: Type.Optional(Type.Number()),
  ratioAtMost: Type.Optional(Type.Number()),
  valueAtLeast: Type.Optional(Type.Number()),
  valueAtMost: Type.Optional(Type.Number()),
}, { additionalProperties: false, minProperties: 1 })

export const FigureSchema = Type.Object({
  name: Type.String({ minLength: 1 }),
  unit: Type.String({ minLength: 1 }),
  value: Type.Number(),
  baseline: Type.Object({ name: Type.String({ minLength: 1 }), value: Type.Number() }, { additionalProperties: false }),
  /** value / baseline.value; null when the baseline is 0. */
  ratio: Type.Union([Type.Number(), Type.Null()]),
  target: Target,
  pass: Type.Boolean(),
}, { additionalProperties: false })

export const ReportSchema = Type.Object({
  benchmark: Type.String({ pattern: '^[a-z0-9-]+$' }),
  description: Type.String({ minLength: 1 }),
  measuredAt: Type.String(),
  machine: Type.Object({ platformId: Type.String(), platform: Type.String() }, { additionalProperties: false }),
  /** How the figures were measured (load, durations, sizes), so runs can be compared. */
  settings: Type.Record(Type.String(), Type.Unknown()),
  figures: Type.Array(FigureSchema, { minItems: 1 }),
  /** Further measurements for the reader (per-stage times, load average, …); not summarised. */
  details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
}, { additionalProperties: false })

export type Figure = Static<typeof FigureSchema>
export type Report = Static<typeof ReportSchema>
export type TargetSpec = Static<typeof Target>

/** Builds a figure: the ratio and the pass verdict are computed here, never written by hand. */
export function figure(f: { name: string; unit: string; value: number; baseline: { name: string; value: number }; target: TargetSpec }): Figure {
  const ratio = f.baseline.value === 0 ? null : f.value / f.baseline.value
  const { ratioAtLeast, ratioAtMost, valueAtLeast, valueAtMost } = f.target
  // A ratio bound cannot be met without a ratio (baseline 0).
  const pass = (ratioAtLeast === undefined || (ratio !== null && ratio >= ratioAtLeast)) &&
    (ratioAtMost === undefined || (ratio !== null && ratio <= ratioAtMost)) &&
    (valueAtLeast === undefined || f.value >= valueAtLeast) &&
    (valueAtMost === undefined || f.value <= valueAtMost)
  return { ...f, ratio, pass }
}

export function reportErrors(report: unknown): string[] {
  return checkSchema(ReportSchema, report, '2020-12').map(formatIssue)
}

/** Validates and writes `bench/out/<benchmark>.json`; returns the path written. */
export async function writeReport(r: Omit<Report, 'measuredAt' | 'machine'>, outDir = BENCH_OUT_DIR): Promise<string> {
  const report: Report = { ...r, measuredAt: new Date().toISOString(), machine: describeMachine() }
  const errors = reportErrors(report)
  if (errors.length > 0) throw new Error(`benchmark report ${r.benchmark} is malformed: ${errors.join('; ')}`)
  await mkdir(outDir, { recursive: true })
  const file = path.join(outDir, `${r.benchmark}.json`)
  await writeFile(file, JSON.stringify(report, null, 2) + '\n')
  return file
}

export async function readReport(file: string): Promise<Report> {
  const parsed: unknown = JSON.parse(await readFile(file, 'utf8'))
  const errors = reportErrors(parsed)
  if (errors.length > 0) throw new Error(`${file}: ${errors.join('; ')}`)
  return parsed as Report
}
