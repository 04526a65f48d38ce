import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import { ErrorPanel } from '../components/ErrorPanel.ts'
import { formatBytes } from '../messages.ts'
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

const looksLikeBytes = (key: string) => /bytes$/i.test(key)

/** A nested object as a definition list (values the spec leaves open are shown as they come). */
function Fields({ value }: { value: Record<string, unknown> }) {
  return html`<dl class="fields">${Object.entries(value).map(([key, v]) => html`<dt>${key}</dt><dd>${
    v !== null && typeof v === 'object' && !Array.isArray(v) ? html`<${Fields} value=${v as Record<string, unknown>} />`
      : looksLikeBytes(key) ? formatBytes(v) : Array.isArray(v) ? JSON.stringify(v) : String(v)
  }</dd>`)}</dl>`
}

function Section({ title, id, state, children }: { title: string; id: string; state: { data: unknown; error: unknown }; children?: unknown }) {
  return html`<section class="panel" aria-labelledby=${id} data-testid=${id}>
    <h2 id=${id}>${title}</h2>
    <${ErrorPanel} error=${state.error} />
    ${state.data === null && !state.error ? html`<p class="hint">Loading…</p>` : children}
  </section>`
}

export function Device({ client }: { client: DeviceClient }) {
  const status = useQuery(() => client.deviceStatus(), 10_000)
  const memory = useQuery(() => client.memoryStatus(), 10_000)
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
      <${Section} title="Algorithms" id="algorithms" state=${algorithms}>${algorithms.data ? html`<div class="table-wrap"><table>
        <thead><tr><th scope="col">Id</th><th scope="col">Name</th><th scope="col">Usage</th><th scope="col">Status</th><th scope="col">Models</th></tr></thead>
        <tbody>${algorithms.data.rows.map((a) => html`<tr><td><code>${a.algorithmId}</code></td><td>${a.algorithmName}</td><td>${a.algorithmUsage}</td><td>${a.runningStatus}</td><td>${Array.isArray(a.models) ? a.models.length : '-'}</td></tr>`)}</tbody>
      </table></div>` : null}</${Section}>
      <${Section} title="Models" id="models" state=${models}>${models.data ? html`<div class="table-wrap"><table>
        <thead><tr>${modelColumns(models.data.rows).map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
        <tbody>${models.data.rows.map((m) => html`<tr>${modelColumns(models.data!.rows).map((c) => html`<td>${cell(m[c])}</td>`)}</tr>`)}</tbody>
      </table></div><p class="hint">${models.data.total} model(s)</p>` : null}</${Section}>
      <${Section} title="Interface" id="interface" state=${routes}>${routes.data ? html`<p><span data-testid="route-count">${routes.data.total}</span> routes mounted.
        Documents ${routes.data.version}:${' '}<a href=${routes.data.http} target="_blank" rel="noopener">HTTP interface</a>${' · '}<a href=${routes.data.mqtt} target="_blank" rel="noopener">MQTT interface</a>${' · '}<a href="/staticfile/openapi.json" target="_blank" rel="noopener">OpenAPI 3.1</a></p>` : null}</${Section}>
      <${Events} client=${client} />
    </div>
  </main>`
}

/** The model rows' own scalar fields, first few (the spec leaves the model shape open). */
const modelColumns = (rows: Record<string, unknown>[]) => [...new Set(rows.flatMap((r) => Object.keys(r).filter((k) => typeof r[k] !== 'object' || r[k] === null)))].slice(0, 6)
const cell = (value: unknown) => (value === null || value === undefined ? '-' : String(value))
