import { html } from 'htm/preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import { NetworkError } from '../../client/errors.ts'
import type { Adapter, ChangeOutcome, ChangeStatus, DnsInfo, Route, RoutesInfo } from '../../../shared/network/types.ts'
import { ErrorPanel, type Failure } from '../components/ErrorPanel.ts'
import { AdapterForm, PendingPanel } from './NetworkChange.ts'
import { Probes } from './NetworkChecks.ts'

interface Reading { adapters: Adapter[]; dns: DnsInfo; routes: RoutesInfo }
/** While a change waits, its status is read this often (a confirmation from another address, the rollback). */
const STATUS_POLL_MS = 2000

const ROLLED_BACK: Record<string, string> = {
  timeout: 'nobody confirmed it in time', reverted: 'it was reverted on request', 'apply failed': 'the backend could not apply it',
}
const outcomeText = (o: ChangeOutcome) => o.outcome === 'confirmed'
  ? `The change of ${o.adapter} was confirmed at ${new Date(o.at).toLocaleString()}.`
  : `The change of ${o.adapter} was rolled back at ${new Date(o.at).toLocaleString()}: ${ROLLED_BACK[o.reason ?? ''] ?? o.reason}. The previous configuration is back.`
const routeText = (r: Route | null) => (r ? `via ${r.gateway ?? '(on link)'} on ${r.dev ?? '?'}${r.metric === null ? '' : `, metric ${r.metric}`}` : 'none')

/**
 * Network (docs/network.md "Network", spec 4.10): the adapters, DNS and default routes as the operating
 * system reports them, an adapter's change with its confirm countdown, and the quality and
 * connectivity probes of the targets an operator configured.
 */
export function Network({ client }: { client: DeviceClient }) {
  const [reading, setReading] = useState<Reading | null>(null)
  const [error, setError] = useState<Failure | null>(null)
  const [editing, setEditing] = useState<string | null>(null)
  const [status, setStatus] = useState<{ change: ChangeStatus; deadline: number } | null>(null)
  const [reachable, setReachable] = useState(true)
  const load = () => Promise.all([
    client.call('/gtw/cwai/network/QueryAdapters', {}),
    client.call('/gtw/cwai/network/QueryDns', {}),
    client.call('/gtw/cwai/network/QueryRoutes', {}),
  ]).then(([adapters, dns, routes]) => setReading({ adapters: adapters.rows, dns, routes }), (e) => setError({ error: e, context: 'Read the network' }))
  // The deadline on this browser's clock: confirmBy is the device's.
  const loadStatus = () => client.polling.call('/gtw/cwai/network/QueryChange', {}).then((change) => {
    setReachable(true)
    setStatus({ change, deadline: change.pending ? Date.now() + change.pending.confirmBy - change.now : 0 })
  }, (e) => (e instanceof NetworkError ? setReachable(false) : setError({ error: e, context: 'Read the pending change' })))
  useEffect(() => { load(); loadStatus() }, [])

  const pendingId = status?.change.pending?.changeId ?? null
  const wasPending = useRef<string | null>(null)
  useEffect(() => {
    // confirmed or rolled back (here or elsewhere): the adapters read again
    if (wasPending.current && !pendingId) load()
    wasPending.current = pendingId
    if (!pendingId) return
    const timer = setInterval(loadStatus, STATUS_POLL_MS)
    return () => clearInterval(timer)
  }, [pendingId])

  const edited = reading?.adapters.find((a) => a.name === editing) ?? null
  const pending = status?.change.pending ?? null
  const last = status?.change.last ?? null
  return html`<main class="network" id="main">
    <h1 tabindex="-1">Network</h1>
    <div class="stack">
      <${ErrorPanel} ...${error} />
      ${pending ? html`<${PendingPanel} client=${client} change=${pending} deadline=${status!.deadline} reachable=${reachable} onDone=${loadStatus} />`
        : last ? html`<p class="notice" role="status" data-testid="last-change">${outcomeText(last)}</p>` : null}
      ${edited ? html`<${AdapterForm} client=${client} adapter=${edited} dns=${reading!.dns}
        onApplied=${() => { setEditing(null); load(); loadStatus() }} onCancel=${() => setEditing(null)} />` : null}
      <${Adapters} adapters=${reading?.adapters ?? null} locked=${!!pending} onEdit=${setEditing} />
      ${reading ? html`<section class="panel" aria-labelledby="dns-heading">
        <h2 id="dns-heading">DNS and default routes</h2>
        <dl class="facts" data-testid="dns">
          <dt>DNS servers</dt><dd data-testid="dns-servers">${reading.dns.servers.join(', ') || 'none'}</dd>
          <dt>Search domains</dt><dd data-testid="search-domains">${reading.dns.searchDomains.join(' ') || 'none'}</dd>
          <dt>Read from</dt><dd><code>${reading.dns.source}</code></dd>
          <dt>Default route (IPv4)</dt><dd data-testid="default-route">${routeText(reading.routes.defaultRoute)}</dd>
          <dt>Default route (IPv6)</dt><dd data-testid="default-route6">${routeText(reading.routes.defaultRoute6)}</dd>
        </dl>
      </section>` : null}
      <${Probes} client=${client} />
    </div>
  </main>`
}

const addresses = (list: Adapter['ipv4']) => (list.length ? list.map((a) => html`<span class="net-address">${a.address}/${a.prefix}</span>`) : '—')
const link = (a: Adapter) => `${a.state}${a.carrier === null ? '' : a.carrier ? ', carrier' : ', no carrier'}`

function Adapters({ adapters, locked, onEdit }: { adapters: Adapter[] | null; locked: boolean; onEdit: (name: string) => void }) {
  return html`<section class="panel" aria-labelledby="adapters-heading">
    <h2 id="adapters-heading">Adapters</h2>
    ${adapters === null ? html`<p class="hint">Loading…</p>` : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Adapters (scrolls)"><table class="cards net-adapters" data-testid="adapters">
      <thead><tr><th scope="col">Adapter</th><th scope="col">MAC</th><th scope="col">IPv4</th><th scope="col">IPv6</th><th scope="col">Gateway</th>
        <th scope="col">Link</th><th scope="col">Speed</th><th scope="col">Configuration</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${adapters.map((a) => html`<tr data-testid=${`adapter-${a.name}`}>
        <th scope="row">${a.name}</th>
        <td data-label="MAC">${a.mac ?? '—'}</td>
        <td data-label="IPv4">${addresses(a.ipv4)}</td>
        <td data-label="IPv6">${addresses(a.ipv6)}</td>
        <td data-label="Gateway">${[a.gateway, a.gateway6].filter(Boolean).join(', ') || '—'}</td>
        <td data-label="Link">${link(a)}</td>
        <td data-label="Speed">${a.speedMbps === null ? '—' : `${a.speedMbps} Mbit/s`}</td>
        <td data-label="Configuration">${a.mode === 'dhcp' ? 'DHCP' : a.mode}<span class="hint net-source">from ${a.modeSource}</span></td>
        <td>${a.type === 'loopback' ? null : html`<button type="button" class="secondary" disabled=${locked} aria-label=${`Change ${a.name}`}
          title=${locked ? 'A change waits for its confirmation' : undefined} onClick=${() => onEdit(a.name)}>Change</button>`}</td>
      </tr>`)}</tbody>
    </table></div>`}
  </section>`
}
