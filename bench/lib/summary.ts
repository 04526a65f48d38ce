import type { Report, TargetSpec } from './report.ts'

export interface SummaryEntry {
  benchmark: string
  file: string
  exitCode: number
  /** Why the benchmark produced no usable report; null when it did. */
  error: string | null
  report: Report | null
}

export interface Summary {
  generatedAt: string
  machine: { platformId: string; platform: string }
  benchmarks: SummaryEntry[]
}

/** Four significant digits below 1000, whole numbers above; trailing decimal zeros dropped. */
export function num(n: number | null): string {
  if (n === null) return '–'
  if (Number.isInteger(n) || Math.abs(n) >= 1000) return String(Math.round(n))
  const text = n.toPrecision(4)
  return text.includes('e') ? String(n) : text.includes('.') ? text.replace(/\.?0+$/, '') : text
}
const cell = (s: string) => s.replace(/\|/g, '\\|')

function targetText(t: TargetSpec, unit: string): string {
  const parts = [
    t.ratioAtLeast !== undefined ? `ratio ≥ ${num(t.ratioAtLeast)}` : null,
    t.ratioAtMost !== undefined ? `ratio ≤ ${num(t.ratioAtMost)}` : null,
    t.valueAtLeast !== undefined ? `≥ ${num(t.valueAtLeast)} ${unit}` : null,
    t.valueAtMost !== undefined ? `≤ ${num(t.valueAtMost)} ${unit}` : null,
  ]
  return parts.filter(Boolean).join(', ')
}

/** The short markdown table of `bench/out/summary.md`: one row per figure. */
export function summaryMarkdown(s: Summary): string {
  const lines = [
    `# Benchmarks — ${s.generatedAt}`,
    '',
    `Machine: ${s.machine.platform} (\`${s.machine.platformId}\`)`,
    '',
    '| benchmark | figure | value | baseline | ratio | target | pass |',
    '|---|---|---|---|---|---|---|',
  ]
  for (const e of s.benchmarks) {
    if (e.report === null || e.error !== null) {
      lines.push(`| ${e.benchmark} | – | – | – | – | – | error: ${cell(e.error ?? 'no report')} |`)
      continue
    }
    for (const f of e.report.figures) {
      lines.push(`| ${e.benchmark} | ${cell(f.name)} | ${num(f.value)} ${cell(f.unit)} | ${num(f.baseline.value)} ${cell(f.unit)} (${cell(f.baseline.name)}) | ${num(f.ratio)} | ${cell(targetText(f.target, f.unit))} | ${f.pass ? 'yes' : 'no'} |`)
    }
  }
  return lines.join('\n') + '\n'
}
