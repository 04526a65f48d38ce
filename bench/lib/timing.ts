/**
 * Timing of repeated runs for benchmarks: bounded in count and in time, summarised as
 * median / p90 / mean / min (milliseconds, two decimals).
 */
export interface Timing {
  runs: number
  medianMs: number
  p90Ms: number
  meanMs: number
  minMs: number
}

export interface RunBounds {
  /** Runs before measuring (first-run allocations, kernel selection). */
  warmup: number
  /** Measured runs: at least `minRuns`, then more while `budgetMs` lasts, at most `maxRuns`. */
  minRuns: number
  maxRuns: number
  budgetMs: number
}

/** The value at percentile `p` (nearest rank below: index ⌊p/100 · n⌋ of the sorted values). */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

const round2 = (v: number) => Math.round(v * 100) / 100

export function summarize(times: number[]): Timing {
  if (times.length === 0) throw new Error('no runs to summarize')
  return {
    runs: times.length,
    medianMs: round2(percentile(times, 50)),
    p90Ms: round2(percentile(times, 90)),
    meanMs: round2(times.reduce((a, b) => a + b, 0) / times.length),
    minMs: round2(Math.min(...times)),
  }
}

/** Runs `run` `bounds.warmup` times, then measures it within `bounds`. */
export async function measure(run: () => Promise<unknown>, bounds: RunBounds): Promise<Timing> {
  for (let i = 0; i < bounds.warmup; i++) await run()
  const times: number[] = []
  const started = performance.now()
  while (times.length < bounds.maxRuns && (times.length < bounds.minRuns || performance.now() - started < bounds.budgetMs)) {
    const t0 = performance.now()
    await run()
    times.push(performance.now() - t0)
  }
  return summarize(times)
}
