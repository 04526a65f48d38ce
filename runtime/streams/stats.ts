/** Latency samples (the last `size`) with percentiles. */
export class Samples {
  private values: number[] = []

  constructor(private readonly size = 512) {}

  add(value: number): void {
    this.values.push(value)
    if (this.values.length > this.size) this.values.shift()
  }

  percentile(p: number): number | null {
    if (this.values.length === 0) return null
    const sorted = [...this.values].sort((a, b) => a - b)
    return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! * 10) / 10
  }
}

/** Events per second over a sliding window. */
export class Rate {
  private times: number[] = []

  constructor(private readonly windowMs = 10_000) {}

  tick(now: number): void {
    this.times.push(now)
    this.trim(now)
  }

  perSecond(now: number): number {
    this.trim(now)
    return Math.round((this.times.length / (this.windowMs / 1000)) * 100) / 100
  }

  private trim(now: number): void {
    while (this.times.length > 0 && this.times[0]! < now - this.windowMs) this.times.shift()
  }
}
