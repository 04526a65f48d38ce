import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { ConnectivityCheck, NetworkTargets, QualityTarget } from '../../../shared/network/schemas.ts'
import type { CheckResult, QualityResult } from '../../../shared/network/types.ts'
import { ErrorPanel, type Failure } from '../components/ErrorPanel.ts'

const byName = <T extends { name: string }>(rows: T[]) => Object.fromEntries(rows.map((r) => [r.name, r]))
const targetOf = (c: ConnectivityCheck) => (c.type === 'tcp' ? `TCP ${c.host}:${c.port}` : c.type === 'http' ? `HTTP GET ${c.url}` : `DNS ${c.hostname}`)
const detailOf = (r: CheckResult) => r.error ?? (r.status !== undefined ? `HTTP ${r.status}` : r.addresses ? r.addresses.join(', ') : '')
const ms = (n: number | null | undefined) => (n === null || n === undefined ? '—' : `${n} ms`)
const value = (e: Event) => (e.target as HTMLInputElement).value
const verdict = (ok: boolean) => html`<span class=${`badge ${ok ? 'open' : 'refused'}`}>${ok ? 'OK' : 'Failed'}</span>`

/**
 * Quality and connectivity (docs/network.md "Network"): the device probes only the targets and checks
 * stored here (SetTargets), each within the stored timeout; results per check, with timings.
 */
export function Probes({ client }: { client: DeviceClient }) {
  const [targets, setTargets] = useState<NetworkTargets | null>(null)
  const [checks, setChecks] = useState<Record<string, CheckResult>>({})
  const [quality, setQuality] = useState<Record<string, QualityResult>>({})
  const [failure, setFailure] = useState<Failure | null>(null)
  const [busy, setBusy] = useState(false)
  useEffect(() => { client.call('/gtw/cwai/network/QueryTargets', {}).then(setTargets, (e) => setFailure({ error: e, context: 'Read the targets' })) }, [])
  /** Whether the work succeeded (an add form then empties). */
  const run = async (context: string, work: () => Promise<void>) => {
    setFailure(null)
    setBusy(true)
    try {
      await work()
      return true
    } catch (e) {
      setFailure({ error: e, context })
      return false
    } finally {
      setBusy(false)
    }
  }
  const save = (next: Partial<NetworkTargets>) => run('Save targets', async () => setTargets(await client.call('/gtw/cwai/network/SetTargets', { ...targets!, ...next })))
  const runChecks = (names?: string[]) => run('Run checks', async () => {
    const { rows } = await client.call('/gtw/cwai/network/TestConnectivity', names ? { names } : {})
    setChecks((shown) => ({ ...shown, ...byName(rows) }))
  })
  const measure = () => run('Measure quality', async () => {
    const { rows } = await client.call('/gtw/cwai/network/TestQuality', {})
    setQuality(byName(rows))
  })
  if (!targets) return html`<section class="panel"><h2>Connectivity and quality</h2><p class="hint">Loading…</p><${ErrorPanel} ...${failure} /></section>`
  return html`<section class="panel stack" aria-labelledby="probes-heading" aria-busy=${busy}>
    <h2 id="probes-heading">Connectivity and quality</h2>
    <h3>Connectivity checks</h3>
    <p class="hint">The device checks only what is configured here: a TCP connect, an HTTP GET (below 400 passes) or a DNS resolution, each within ${targets.timeoutMs} ms.</p>
    ${targets.checks.length ? html`<div class="table-wrap"><table class="cards" data-testid="checks">
      <thead><tr><th scope="col">Check</th><th scope="col">Target</th><th scope="col">Result</th><th scope="col">Time</th><th scope="col">Details</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${targets.checks.map((c) => {
        const r = checks[c.name]
        return html`<tr data-testid=${`check-${c.name}`}>
          <th scope="row">${c.name}</th>
          <td data-label="Target">${targetOf(c)}</td>
          <td data-label="Result" data-testid="check-result">${r ? verdict(r.ok) : 'not run'}</td>
          <td data-label="Time" data-testid="check-time">${r ? ms(r.timeMs) : '—'}</td>
          <td data-label="Details" data-testid="check-detail">${r ? detailOf(r) : ''}</td>
          <td class="actions">
            <button type="button" class="secondary" disabled=${busy} aria-label=${`Run ${c.name}`} onClick=${() => runChecks([c.name])}>Run</button>
            <button type="button" class="danger-outline" disabled=${busy} aria-label=${`Remove ${c.name}`} onClick=${() => save({ checks: targets.checks.filter((x) => x !== c) })}>Remove</button>
          </td>
        </tr>`
      })}</tbody>
    </table></div>` : html`<p class="hint">No checks configured.</p>`}
    <div class="row"><button type="button" disabled=${busy || !targets.checks.length} onClick=${() => runChecks()} data-testid="run-checks">Run all checks</button></div>
    <${AddCheck} disabled=${busy} onAdd=${(c: ConnectivityCheck) => save({ checks: [...targets.checks, c] })} />

    <h3>Network quality</h3>
    <p class="hint">Latency, jitter and loss from ${targets.samples} timed TCP connects per target (ICMP needs privileges the device does not hold).</p>
    ${targets.qualityTargets.length ? html`<div class="table-wrap"><table class="cards" data-testid="quality">
      <thead><tr><th scope="col">Target</th><th scope="col">Host</th><th scope="col">Received</th><th scope="col">Loss</th><th scope="col">Latency min / avg / max</th><th scope="col">Jitter</th><th scope="col">Last error</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${targets.qualityTargets.map((t) => {
        const q = quality[t.name]
        return html`<tr data-testid=${`quality-${t.name}`}>
          <th scope="row">${t.name}</th>
          <td data-label="Host">${t.host}:${t.port}</td>
          <td data-label="Received">${q ? `${q.received} of ${q.sent}` : '—'}</td>
          <td data-label="Loss">${q ? `${q.lossPercent} %` : '—'}</td>
          <td data-label="Latency" data-testid="quality-latency">${q?.latencyMs ? `${q.latencyMs.min} / ${q.latencyMs.avg} / ${q.latencyMs.max} ms` : '—'}</td>
          <td data-label="Jitter">${q ? ms(q.jitterMs) : '—'}</td>
          <td data-label="Last error">${q?.lastError ?? ''}</td>
          <td><button type="button" class="danger-outline" disabled=${busy} aria-label=${`Remove ${t.name}`} onClick=${() => save({ qualityTargets: targets.qualityTargets.filter((x) => x !== t) })}>Remove</button></td>
        </tr>`
      })}</tbody>
    </table></div>` : html`<p class="hint">No quality targets configured.</p>`}
    <div class="row"><button type="button" disabled=${busy || !targets.qualityTargets.length} onClick=${measure} data-testid="measure-quality">Measure</button></div>
    <${AddTarget} disabled=${busy} onAdd=${(t: QualityTarget) => save({ qualityTargets: [...targets.qualityTargets, t] })} />
    <${ProbeSettings} targets=${targets} disabled=${busy} onSave=${save} />
    <${ErrorPanel} ...${failure} />
  </section>`
}

type Add<T> = (item: T) => Promise<boolean>
const EMPTY_CHECK = { name: '', type: 'tcp' as ConnectivityCheck['type'], host: '', port: '', url: '', hostname: '' }
const EMPTY_TARGET = { name: '', host: '', port: '' }

function AddCheck({ disabled, onAdd }: { disabled: boolean; onAdd: Add<ConnectivityCheck> }) {
  const [c, setC] = useState(EMPTY_CHECK)
  const submit = async (event: Event) => {
    event.preventDefault()
    const added = await onAdd(c.type === 'tcp' ? { name: c.name, type: 'tcp', host: c.host, port: Number(c.port) }
      : c.type === 'http' ? { name: c.name, type: 'http', url: c.url } : { name: c.name, type: 'dns', hostname: c.hostname })
    if (added) setC({ ...EMPTY_CHECK, type: c.type })
  }
  const field = (key: 'name' | 'host' | 'port' | 'url' | 'hostname', label: string, extra: Record<string, unknown> = {}) =>
    html`<label>${label}<input required value=${c[key]} onInput=${(e: Event) => setC({ ...c, [key]: value(e) })} data-testid=${`new-check-${key}`} ...${extra} /></label>`
  return html`<form class="filters" onSubmit=${submit} aria-label="Add a connectivity check">
    ${field('name', 'Check name')}
    <label>Kind<select value=${c.type} onChange=${(e: Event) => setC({ ...c, type: value(e) as ConnectivityCheck['type'] })} data-testid="new-check-type">
      <option value="tcp">TCP connect</option><option value="http">HTTP GET</option><option value="dns">DNS resolution</option>
    </select></label>
    ${c.type === 'tcp' ? html`${field('host', 'Host')}${field('port', 'Port', { type: 'number', min: 1, max: 65535 })}`
      : c.type === 'http' ? field('url', 'URL', { type: 'url', placeholder: 'http://' }) : field('hostname', 'Host name')}
    <button type="submit" class="secondary" disabled=${disabled} data-testid="add-check">Add check</button>
  </form>`
}

function AddTarget({ disabled, onAdd }: { disabled: boolean; onAdd: Add<QualityTarget> }) {
  const [t, setT] = useState(EMPTY_TARGET)
  const field = (key: keyof typeof t, label: string, extra: Record<string, unknown> = {}) =>
    html`<label>${label}<input required value=${t[key]} onInput=${(e: Event) => setT({ ...t, [key]: value(e) })} data-testid=${`new-target-${key}`} ...${extra} /></label>`
  const submit = async (event: Event) => {
    event.preventDefault()
    if (await onAdd({ name: t.name, host: t.host, port: Number(t.port) })) setT(EMPTY_TARGET)
  }
  return html`<form class="filters" onSubmit=${submit} aria-label="Add a quality target">
    ${field('name', 'Target name')}${field('host', 'Host')}${field('port', 'TCP port', { type: 'number', min: 1, max: 65535 })}
    <button type="submit" class="secondary" disabled=${disabled} data-testid="add-target">Add target</button>
  </form>`
}

function ProbeSettings({ targets, disabled, onSave }: { targets: NetworkTargets; disabled: boolean; onSave: (next: Partial<NetworkTargets>) => Promise<boolean> }) {
  const [samples, setSamples] = useState(String(targets.samples))
  const [timeoutMs, setTimeoutMs] = useState(String(targets.timeoutMs))
  return html`<form class="filters" onSubmit=${(e: Event) => { e.preventDefault(); onSave({ samples: Number(samples), timeoutMs: Number(timeoutMs) }) }} aria-label="Probe settings">
    <label>Connects per target<input type="number" min="1" max="10" required value=${samples} onInput=${(e: Event) => setSamples(value(e))} /></label>
    <label>Timeout (ms)<input type="number" min="100" max="5000" required value=${timeoutMs} onInput=${(e: Event) => setTimeoutMs(value(e))} /></label>
    <button type="submit" class="secondary" disabled=${disabled}>Save settings</button>
  </form>`
}
