import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import { ErrorPanel } from '../components/ErrorPanel.ts'
import { formatBytes } from '../messages.ts'
import { KEEP_MS, SAMPLE_MS, type MetricsHistory, type Series } from '../metrics-history.ts'

const WIDTH = 300
const HEIGHT = 80
const MAX_LINES = 5
const COLOURS = ['#1f5fbf', '#c0392b', '#1d7a3a', '#8e44ad', '#b9770e']

/** A small line graph of up to MAX_LINES series over the last hour, with each one's latest value. */
function Graph({ title, id, series, format }: { title: string; id: string; series: Series[]; format: (v: number) => string }) {
  const top = [...series].sort((a, b) => (b.points.at(-1)?.v ?? 0) - (a.points.at(-1)?.v ?? 0)).slice(0, MAX_LINES)
  const now = Date.now()
  const max = Math.max(1e-9, ...top.flatMap((s) => s.points.map((p) => p.v)))
  const x = (t: number) => WIDTH - ((now - t) / KEEP_MS) * WIDTH
  const y = (v: number) => HEIGHT - (v / max) * (HEIGHT - 4) - 2
  return html`<section class="panel graph" aria-labelledby=${id} data-testid=${id}>
    <h2 id=${id}>${title}</h2>
    ${top.length ? html`<svg viewBox=${`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label=${`${title}, last hour; highest ${format(max)}`}>
      <line x1="0" y1=${HEIGHT - 1} x2=${WIDTH} y2=${HEIGHT - 1} class="axis" />
      ${top.map((s, i) => html`<polyline fill="none" stroke=${COLOURS[i]} stroke-width="1.5" vector-effect="non-scaling-stroke"
        points=${s.points.map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(' ')} />`)}
    </svg>
    <ul class="legend">${top.map((s, i) => html`<li data-series=${s.key}><span class="swatch" style=${{ background: COLOURS[i] }}></span>
      <span class="series-key">${s.key || 'device'}</span> <strong data-testid="latest">${format(s.points.at(-1)!.v)}</strong></li>`)}</ul>`
      : html`<p class="hint">Waiting for two readings…</p>`}
  </section>`
}

const perMinute = (v: number) => `${(v * 60).toFixed(v * 60 < 10 ? 1 : 0)}/min`

/**
 * The device's own metrics over the last hour (docs/metrics.md "Metrics"), read every few seconds while
 * signed in and kept in this tab's memory: CPU, memory, inference time per algorithm, requests
 * per route, events delivered per channel.
 */
export function Metrics({ history }: { history: MetricsHistory }) {
  const [, setTick] = useState(0)
  useEffect(() => history.subscribe(() => setTick((n) => n + 1)), [])
  return html`<main class="metrics" id="main">
    <h1 tabindex="-1">Metrics</h1>
    <p class="hint">Read every ${SAMPLE_MS / 1000} s from <code>/gtw/cwai/System/Metrics</code> while you are signed in; the last hour is kept in this tab only.${' '}
      <span data-testid="sample-count">${history.count}</span> reading(s).</p>
    <${ErrorPanel} error=${history.lastError} context="Metrics" />
    <div class="grid graphs">
      <${Graph} title="CPU (server process)" id="graph-cpu" series=${history.rate('process_cpu_seconds_total')} format=${(v: number) => `${(v * 100).toFixed(1)} %`} />
      <${Graph} title="Memory (server process)" id="graph-memory" series=${history.gauge('process_resident_memory_bytes')} format=${(v: number) => formatBytes(v, true)} />
      <${Graph} title="Mean inference time per algorithm" id="graph-inference" series=${history.mean('inference_duration_seconds', 'algorithm')} format=${(v: number) => `${Math.round(v * 1000)} ms`} />
      <${Graph} title="Requests per route" id="graph-requests" series=${history.rate('http_requests_total', 'route')} format=${perMinute} />
      <${Graph} title="Events delivered per channel" id="graph-events" series=${history.rate('event_deliveries_total', 'channel', (s) => s.labels.outcome === 'delivered')} format=${perMinute} />
    </div>
  </main>`
}
