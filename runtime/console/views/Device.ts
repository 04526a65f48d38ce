import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import { ErrorPanel } from '../components/ErrorPanel.ts'
import { formatBytes, formatDetail, words } from '../messages.ts'
import { Events } from './Events.ts'

/** Loads one device query; each section shows its own error, so one missing function hides nothing else. */
function useQuery<T>(load: () => Promise<T>, refreshMs = 0) {
  const [state, setState] = useState<{ data: T | null; error: unknown }>({ data: null, error: null })
  useEffect(() => {
    let live = true
    const run = () => load().then((data) => live && setState({ data, error: null }), (error) => live && setState((s) => ({ data: s.data, error })))
    run()
    const timer = refreshMs ? setInterval(run, refreshMs) : null
    return () => { live = false; if (timer) clearInterval(timer) }
  }, [])
  return state
}

/**
 * A nested object as a definition list in words: labels from the keys, byte counts, durations,
 * percentages and millisecond timestamps (spec 8) in units and local time; nothing as `null`.
 */
function Fields({ value }: { value: Record<string, unknown> }) {
  return html`<dl class="fields">${Object.entries(value).map(([key, v]) => html`<dt>${label(key)}</dt><dd data-field=${key}>${
    v === null || v === undefined ? html`<span class="hint">none</span>`
      : typeof v === 'object' && !Array.isArray(v) ? html`<${Fields} value=${v as Record<string, unknown>} />`
      : formatDetail(key, v)
  }</dd>`)}</dl>`
}

const ACRONYMS: Record<string, string> = { cpu: 'CPU', pid: 'PID', rss: 'RSS', vm: 'VM' }
/** `uptimeSeconds` → "Uptime", `loadAverage1m` → "Load average 1 min": the unit is in the value. */
const label = (key: string) => words(key.replace(/(?<=.)(Seconds|Bytes|Percent)$/, '').replace(/(\d+)m$/, ' $1 min'))
  .split(' ').map((w) => ACRONYMS[w.toLowerCase()] ?? w).join(' ')

/** spec 2.3: "2" is image analysis; the device names no other usage. */
const usageText = (usage: string) => (usage === '2' ? 'Image analysis' : usage ? `Other (${usage})` : '-')
/** spec 2.3: 0 is the only running status a client shows. */
const statusText = (status: number) => (status === 0 ? 'Ready' : `Not ready (${status})`)

function Section({ title, id, state, children }: { title: string; id: string; state: { data: unknown; error: unknown }; children?: unknown }) {
  return html`<section class="panel" aria-labelledby=${id} data-testid=${id}>
    <h2 id=${id}>${title}</h2>
    <${ErrorPanel} error=${state.error} />
    ${state.data === null && !state.error ? html`<p class="hint">Loading…</p>` : children}
  </section>`
}

export function Device({ client }: { client: DeviceClient }) {
  const status = useQuery(() => client.polling.deviceStatus(), 10_000)
  const memory = useQuery(() => client.polling.memoryStatus(), 10_000)
  const algorithms = useQuery(() => client.algorithmPage({ algorithmUsage: '' }))
  const models = useQuery(() => client.modelList())
  const routes = useQuery(async () => {
    const [view, http, mqtt] = await Promise.all([client.viewRoutes(), client.interfaceDocUrl(0), client.interfaceDocUrl(1)])
    return { total: view.total, http: http.url, mqtt: mqtt.url, version: http.version }
  })

  return html`<main class="device" id="main">
    <h1 tabindex="-1">Device</h1>
    <div class="grid">
      <${Section} title="Status" id="status" state=${status}>${status.data ? html`<${Fields} value=${status.data} />` : null}</${Section}>
      <${Section} title="Memory" id="memory" state=${memory}>${memory.data ? html`<${Fields} value=${memory.data} />` : null}</${Section}>
      <${Section} title="Algorithms" id="algorithms" state=${algorithms}>${algorithms.data ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Algorithms (scrolls)"><table class="cards">
        <thead><tr><th scope="col">Id</th><th scope="col">Name</th><th scope="col">Usage</th><th scope="col">Status</th><th scope="col">Models</th></tr></thead>
        <tbody>${algorithms.data.rows.map((a) => html`<tr><th scope="row" data-label="Id"><code class="wrap">${a.algorithmId}</code></th><td class="wrap" data-label="Name">${a.algorithmName}</td>
          <td data-label="Usage">${usageText(a.algorithmUsage)}</td><td data-label="Status">${statusText(a.runningStatus)}</td><td data-label="Models">${Array.isArray(a.models) ? a.models.length : '-'}</td></tr>`)}</tbody>
      </table></div>` : null}</${Section}>
      <${Section} title="Models" id="models" state=${models}>${models.data ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Models (scrolls)"><table class="cards">
        <thead><tr><th scope="col">Id</th><th scope="col">Name</th><th scope="col">Source</th><th scope="col">Size</th></tr></thead>
        <tbody>${models.data.rows.map((m) => html`<tr><th scope="row" data-label="Id"><code class="wrap">${m.modelId}</code></th><td class="wrap" data-label="Name">${m.modelName}</td>
          <td data-label="Source">${m.source === 'preset' ? 'Shipped' : 'Uploaded'}</td><td data-label="Size">${m.sizeBytes === undefined ? '-' : formatBytes(m.sizeBytes, true)}</td></tr>`)}</tbody>
      </table></div><p class="hint">${models.data.total} model(s) · <a href="#/models">Manage models</a></p>` : null}</${Section}>
      <${Section} title="Interface" id="interface" state=${routes}>${routes.data ? html`<p><span data-testid="route-count">${routes.data.total}</span> routes mounted.
        Documents ${routes.data.version}:${' '}<a href=${routes.data.http} target="_blank" rel="noopener">HTTP interface</a>${' · '}<a href=${routes.data.mqtt} target="_blank" rel="noopener">MQTT interface</a>${' · '}<a href="/staticfile/openapi.json" target="_blank" rel="noopener">OpenAPI 3.1</a></p>` : null}</${Section}>
      <${Events} client=${client} />
    </div>
  </main>`
}
