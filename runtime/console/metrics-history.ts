import type { DeviceClient } from '../client/client.ts'

/** How often the console reads the device's metrics, and how much it keeps (in this tab's memory only). */
export const SAMPLE_MS = 5_000
export const KEEP_MS = 60 * 60_000

/** One series of a scrape: name, labels, value (Prometheus text exposition format 0.0.4). */
export interface MetricSample { name: string; labels: Record<string, string>; value: number }

/** Parses the text exposition format: `name{label="value",...} number [timestamp]`; comments skipped. */
export function parsePrometheus(text: string): MetricSample[] {
  const samples: MetricSample[] = []
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line)
    if (!match) continue
    const labels: Record<string, string> = {}
    for (const l of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))
    const value = Number(match[3])
    if (!Number.isNaN(value)) samples.push({ name: match[1]!, labels, value })
  }
  return samples
}

/** A point of a derived series: time (ms) and value. */
export interface Point { t: number; v: number }
export interface Series { key: string; points: Point[] }

interface Scrape { t: number; samples: MetricSample[] }

/** Sums the samples of one metric by one label (all into '' when no label is named). */
const sumBy = (samples: MetricSample[], name: string, label: string | null, filter: (s: MetricSample) => boolean = () => true) => {
  const out = new Map<string, number>()
  for (const s of samples) if (s.name === name && filter(s)) out.set(label ? s.labels[label] ?? '' : '', (out.get(label ? s.labels[label] ?? '' : '') ?? 0) + s.value)
  return out
}

/**
 * The device's own metrics over the last hour (docs/metrics.md "Metrics"), read every SAMPLE_MS while
 * the console is signed in, kept in memory: a reload starts afresh. Rates come from the
 * differences of counters between two scrapes (a counter that went down: the device restarted).
 */
export class MetricsHistory {
  #scrapes: Scrape[] = []
  #timer: ReturnType<typeof setInterval> | null = null
  #listeners = new Set<() => void>()
  lastError: unknown = null

  constructor(private readonly client: DeviceClient) {}

  start() {
    if (this.#timer) return
    this.#scrape()
    this.#timer = setInterval(() => this.#scrape(), SAMPLE_MS)
  }

  stop() {
    if (this.#timer) clearInterval(this.#timer)
    this.#timer = null
    this.#scrapes = []
  }

  /** Called after every scrape; returns the unsubscribe. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  get count() {
    return this.#scrapes.length
  }

  async #scrape() {
    try {
      const samples = parsePrometheus(await this.client.polling.metricsText())
      const t = Date.now()
      this.#scrapes.push({ t, samples })
      while (this.#scrapes.length && this.#scrapes[0]!.t < t - KEEP_MS) this.#scrapes.shift()
      this.lastError = null
    } catch (error) {
      this.lastError = error
    }
    for (const listener of this.#listeners) listener()
  }

  /** A gauge (or any value as it is) summed by a label. */
  gauge(name: string, label: string | null = null): Series[] {
    return this.#collect((s) => sumBy(s.samples, name, label))
  }

  /** Per-second rate of a counter summed by a label, between consecutive scrapes. */
  rate(name: string, label: string | null = null, filter?: (s: MetricSample) => boolean): Series[] {
    return this.#between((a, b, dt) => {
      const before = sumBy(a.samples, name, label, filter)
      const out = new Map<string, number>()
      for (const [key, v] of sumBy(b.samples, name, label, filter)) {
        const prev = before.get(key) ?? 0
        out.set(key, v >= prev ? (v - prev) / dt : v / dt)
      }
      return out
    })
  }

  /** Mean of a histogram over each interval (Δsum / Δcount) by a label: e.g. the mean inference time. */
  mean(histogram: string, label: string): Series[] {
    return this.#between((a, b) => {
      const sumA = sumBy(a.samples, `${histogram}_sum`, label), countA = sumBy(a.samples, `${histogram}_count`, label)
      const out = new Map<string, number>()
      for (const [key, sum] of sumBy(b.samples, `${histogram}_sum`, label)) {
        const count = (sumBy(b.samples, `${histogram}_count`, label).get(key) ?? 0) - (countA.get(key) ?? 0)
        if (count > 0) out.set(key, (sum - (sumA.get(key) ?? 0)) / count)
      }
      return out
    })
  }

  #collect(read: (s: Scrape) => Map<string, number>): Series[] {
    const series = new Map<string, Point[]>()
    for (const scrape of this.#scrapes) for (const [key, v] of read(scrape)) series.set(key, [...(series.get(key) ?? []), { t: scrape.t, v }])
    return [...series].map(([key, points]) => ({ key, points }))
  }

  #between(read: (a: Scrape, b: Scrape, seconds: number) => Map<string, number>): Series[] {
    const series = new Map<string, Point[]>()
    for (let i = 1; i < this.#scrapes.length; i++) {
      const a = this.#scrapes[i - 1]!, b = this.#scrapes[i]!
      for (const [key, v] of read(a, b, Math.max(0.001, (b.t - a.t) / 1000))) series.set(key, [...(series.get(key) ?? []), { t: b.t, v }])
    }
    return [...series].map(([key, points]) => ({ key, points }))
  }
}
