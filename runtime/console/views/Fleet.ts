import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import { DeviceError } from '../../client/errors.ts'
import { ROUTES } from '../../client/routes.ts'
import type { Envelope } from '../../client/types.ts'
import type { FleetCallResult, FleetDeviceView } from '../../../shared/fleet/types.ts'
import { ErrorPanel } from '../components/ErrorPanel.ts'
import { formatBytes, showError } from '../messages.ts'
import { localTime } from '../format.ts'
import { FleetPushPanel } from './FleetPush.ts'

/** How often the list is read again (docs/deployment.md "Fleet view": a stopped device shows offline within it). */
export const FLEET_REFRESH_MS = 2000

/** Settings an operator pushes to several devices at once, as `device-cli fleet call` does; any route with "Other route". */
const OPERATIONS = [
  { path: '/gtw/cwai/System/SetImageQualityParam', label: 'Image quality (SetImageQualityParam)', body: '{"snapshot": {"quality": 80}}' },
  { path: '/gtw/cwai/System/SetDebugParam', label: 'Log level (SetDebugParam)', body: '{"level": "info"}' },
  { path: '/gtw/cwai/System/SetRecordParam', label: 'Recording (SetRecordParam)', body: '{}' },
  { path: '/gtw/cwai/System/SetTimeParam', label: 'Time and NTP (SetTimeParam)', body: '{}' },
  { path: '', label: 'Other route', body: '{}' },
]

type Progress = { state: 'running' } | { state: 'done'; result: FleetCallResult } | { state: 'failed'; error: unknown }

const duration = (seconds: number) => {
  const d = Math.floor(seconds / 86_400)
  const h = Math.floor((seconds % 86_400) / 3600)
  const m = Math.floor((seconds % 3600) / 60)
  return d > 0 ? `${d} d ${h} h` : h > 0 ? `${h} h ${m} min` : `${m} min ${seconds % 60} s`
}

function Outcome({ path, progress }: { path: string; progress: Progress }) {
  if (progress.state === 'running') return html`<span data-state="running">Running…</span>`
  if (progress.state === 'failed') return html`<${ErrorPanel} error=${progress.error} />`
  const { result } = progress
  if (result.ok) return html`<span data-state="ok">Done</span>`
  if (result.outcome === 'offline') return html`<span data-state="offline">Not sent: the device is offline</span>`
  if (result.outcome === 'unknown-device') return html`<span data-state="unknown">Not sent: no such device on the broker</span>`
  if (result.outcome === 'timeout') return html`<span data-state="timeout">No answer in time</span>`
  const shown = showError(new DeviceError(path, result.status ?? 0, (result.envelope as Envelope | null)?.resMsg ?? []))
  return html`<span data-state="refused" role="alert">${shown.title}${shown.messageKey ? html` <code>${shown.messageKey}</code>` : null}${shown.actionText ? html` · ${shown.actionText}` : null}${
    shown.facts.length ? html` (${shown.facts.map(([k, v]) => `${k}: ${v}`).join(', ')})` : null}</span>`
}

/**
 * The Fleet view (docs/deployment.md "Fleet view"): every device announced on this device's
 * broker with its status and latest alarms, and a route run on the selected devices at once
 * with each device's progress and answer. Only signed-in sessions reach it; no device's
 * credential is shown or needed here (requests travel through the broker, spec 5.6).
 */
export function Fleet({ client }: { client: DeviceClient }) {
  const [devices, setDevices] = useState<FleetDeviceView[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [selected, setSelected] = useState<Set<string>>(new Set())
  const [operation, setOperation] = useState(0)
  const [path, setPath] = useState(OPERATIONS[0]!.path)
  const [body, setBody] = useState(OPERATIONS[0]!.body)
  const [bodyError, setBodyError] = useState<string | null>(null)
  const [progress, setProgress] = useState<Record<string, Progress>>({})
  const [ranPath, setRanPath] = useState('')

  useEffect(() => {
    let live = true
    const load = () => client.call(ROUTES.fleetList, {})
      .then((answer) => { if (live) { setDevices(answer.rows); setError(null) } }, (e) => { if (live) setError(e) })
    load()
    const timer = setInterval(load, FLEET_REFRESH_MS)
    return () => { live = false; clearInterval(timer) }
  }, [])

  const toggle = (deviceId: string) => setSelected((now) => {
    const next = new Set(now)
    if (next.has(deviceId)) next.delete(deviceId)
    else next.add(deviceId)
    return next
  })

  const run = async (event: Event) => {
    event.preventDefault()
    let parsed: unknown
    try {
      parsed = JSON.parse(body)
      setBodyError(null)
    } catch (e) {
      setBodyError(`The body is not JSON: ${(e as Error).message}`)
      return
    }
    const targets = [...selected]
    setRanPath(path)
    setProgress(Object.fromEntries(targets.map((id) => [id, { state: 'running' } as Progress])))
    // One request per device, so that each device's answer shows as soon as it comes.
    await Promise.all(targets.map((deviceId) => client.call(ROUTES.fleetCall, { deviceIds: [deviceId], path, body: parsed })
      .then((answer) => setProgress((now) => ({ ...now, [deviceId]: { state: 'done', result: answer.rows[0]! } })),
        (e) => setProgress((now) => ({ ...now, [deviceId]: { state: 'failed', error: e } })))))
  }

  return html`<main class="fleet" id="main">
    <h1 tabindex="-1">Fleet</h1>
    <p class="hint">The devices announced on this device's MQTT broker, read every ${FLEET_REFRESH_MS / 1000} s. A device stopped shows offline at once; one that died or lost its network, once the broker's keep-alive (45 s) runs out.</p>
    <${ErrorPanel} error=${error} />
    ${devices === null && !error ? html`<p class="hint">Loading…</p>` : null}
    ${devices ? html`<section class="panel" aria-labelledby="fleet-devices"><h2 id="fleet-devices">Devices (${devices.length})</h2>
      <div class="table-wrap" tabindex="0" role="region" aria-label="Devices (scrolls)"><table class="cards">
        <thead><tr><th scope="col">Select</th><th scope="col">Device</th><th scope="col">State</th><th scope="col">Version</th><th scope="col">Uptime</th><th scope="col">Cameras</th><th scope="col">Tasks</th><th scope="col">Alarms (1 h)</th><th scope="col">Disk free</th><th scope="col">Latest alarms</th><th scope="col">Console</th></tr></thead>
        <tbody>${devices.map((d) => html`<tr data-testid=${`device-${d.deviceId}`} data-state=${d.state}>
          <td data-label="Select"><input type="checkbox" aria-label=${`Select ${d.deviceId}`} checked=${selected.has(d.deviceId)} onChange=${() => toggle(d.deviceId)} /></td>
          <th scope="row" data-label="Device"><code class="wrap">${d.deviceId}</code>${d.self ? html` <span class="hint">(this device)</span>` : null}</th>
          <td data-label="State" data-testid="state">${d.state === 'online' ? 'Online' : d.state === 'offline' ? 'Offline' : 'Unknown'}</td>
          <td data-label="Version">${d.softwareVersion ?? '-'}</td>
          <td data-label="Uptime">${d.state === 'online' && d.summary ? duration(d.summary.uptimeSeconds) : '-'}</td>
          <td data-label="Cameras">${d.summary ? `${d.summary.cameras.online} of ${d.summary.cameras.total} online` : '-'}</td>
          <td data-label="Tasks">${d.summary ? `${d.summary.tasks.running} of ${d.summary.tasks.total} running` : '-'}</td>
          <td data-label="Alarms (1 h)">${d.summary ? d.summary.alarmsLastHour : '-'}</td>
          <td data-label="Disk free">${d.summary ? formatBytes(d.summary.diskAvailableBytes, true) : '-'}</td>
          <td data-label="Latest alarms">${d.summary?.latestAlarms.length ? html`<ul class="fleet-alarms">${d.summary.latestAlarms.map((a) => html`<li>
            ${a.thumbnail ? html`<img src=${a.thumbnail} alt=${`${a.policyName ?? 'alarm'}: ${a.label ?? ''}`} width="80" />` : null}
            <span>${a.policyName ?? a.message} · ${a.label ?? '-'} · ${localTime(Date.parse(a.time))}</span></li>`)}</ul>` : html`<span class="hint">none</span>`}</td>
          <td data-label="Console">${d.consoleUrl ? html`<a href=${`${d.consoleUrl}/console/`} target="_blank" rel="noopener">Open console</a>` : '-'}</td>
        </tr>`)}</tbody>
      </table></div></section>
    <section class="panel" aria-labelledby="fleet-run"><h2 id="fleet-run">Run a route or push a setting on the selected devices</h2>
      <form onSubmit=${run}>
        <label>Operation <select value=${operation} onChange=${(e: Event) => {
          const index = Number((e.target as HTMLSelectElement).value)
          setOperation(index)
          setPath(OPERATIONS[index]!.path)
          setBody(OPERATIONS[index]!.body)
        }}>${OPERATIONS.map((o, i) => html`<option value=${i}>${o.label}</option>`)}</select></label>
        <label>Route <input value=${path} required onInput=${(e: Event) => setPath((e.target as HTMLInputElement).value)} /></label>
        <label>Body (JSON) <textarea rows="3" value=${body} onInput=${(e: Event) => setBody((e.target as HTMLTextAreaElement).value)}></textarea></label>
        ${bodyError ? html`<p role="alert" class="error">${bodyError}</p>` : null}
        <button type="submit" disabled=${selected.size === 0}>Run on ${selected.size} device(s)</button>
      </form>
      ${Object.keys(progress).length ? html`<ul class="fleet-results" aria-live="polite">${Object.entries(progress).map(([deviceId, p]) => html`<li data-testid=${`result-${deviceId}`}>
        <code>${deviceId}</code>: <${Outcome} path=${ranPath} progress=${p} /></li>`)}</ul>` : null}
    </section>
    <${FleetPushPanel} client=${client} selected=${[...selected]} />` : null}
  </main>`
}
