import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import { DeviceError, NetworkError } from '../../client/errors.ts'
import { adapterConfigProblem, CHANGE_LIMITS as L, ipVersion, type ChangeProblem } from '../../../shared/network/check.ts'
import type { AdapterChange } from '../../../shared/network/schemas.ts'
import type { Adapter, DnsInfo, PendingChange } from '../../../shared/network/types.ts'
import { ErrorPanel, type Failure } from '../components/ErrorPanel.ts'

export const NET = '/gtw/cwai/network/'
const FIELDS = { adapter: 'Adapter', mode: 'Configuration', address: 'Address', prefix: 'Prefix length', gateway: 'Gateway', dns: 'DNS servers', searchDomains: 'Search domains', confirmTimeoutSeconds: 'Time to confirm' } as const
type Field = keyof typeof FIELDS
/** `/dns/1` → `dns`: the form control a device's (or the form's own) InvalidParam is shown at. */
const fieldOf = (pointer: string): Field | null => {
  const key = pointer.split('/')[1] ?? ''
  return key in FIELDS ? key as Field : null
}
const list = (text: string) => text.split(/[\s,]+/).filter(Boolean)

/** The console's address at `address`: where the operator confirms a change that moves it (docs/network.md "Network"). */
const consoleAt = (address: string) => `${location.protocol}//${address}${location.port ? `:${location.port}` : ''}/console/#/network`

/** What the form holds, as the device's request, or the first problem the device would name. */
function build(adapter: string, f: FormState): { change: AdapterChange } | { problem: ChangeProblem } {
  const problem = (field: string, reason: string) => ({ problem: { field, reason, extra: {} } })
  const prefix = f.prefix.trim() === '' ? undefined : Number(f.prefix)
  if (f.mode === 'static' && prefix !== undefined && !Number.isInteger(prefix)) return problem('/prefix', 'must be a whole number')
  const dns = list(f.dns)
  const searchDomains = list(f.searchDomains)
  if (dns.length > L.dns) return problem('/dns', `are more than ${L.dns}`)
  if (searchDomains.length > L.searchDomains) return problem('/searchDomains', `are more than ${L.searchDomains}`)
  const badDomain = searchDomains.findIndex((d) => d.length > L.searchDomainLength || !new RegExp(L.searchDomainPattern).test(d))
  if (badDomain >= 0) return problem(`/searchDomains/${badDomain}`, 'may hold only letters, digits, dots and hyphens')
  const seconds = f.confirmSeconds.trim() === '' ? undefined : Number(f.confirmSeconds)
  if (seconds !== undefined && !(Number.isInteger(seconds) && seconds >= L.confirmSeconds.min && seconds <= L.confirmSeconds.max))
    return problem('/confirmTimeoutSeconds', `must be ${L.confirmSeconds.min} to ${L.confirmSeconds.max} seconds`)
  const change: AdapterChange = {
    adapter, mode: f.mode,
    ...(f.mode === 'static' ? { address: f.address.trim() || undefined, prefix, gateway: f.gateway.trim() || undefined } : {}),
    ...(dns.length ? { dns } : {}),
    ...(searchDomains.length ? { searchDomains } : {}),
    ...(seconds === undefined ? {} : { confirmTimeoutSeconds: seconds }),
  }
  const found = adapterConfigProblem(change)
  return found ? { problem: found } : { change }
}

interface FormState { mode: 'static' | 'dhcp'; address: string; prefix: string; gateway: string; dns: string; searchDomains: string; confirmSeconds: string }

/**
 * Changes one adapter (docs/network.md "Network", SetAdapter): checked here with the device's own
 * checks (shared/network/check.ts) and shown by field; the device stays the authority, and its
 * InvalidParam is shown at the field it names.
 */
export function AdapterForm({ client, adapter, dns, onApplied, onCancel }: {
  client: DeviceClient; adapter: Adapter; dns: DnsInfo | null; onApplied: () => void; onCancel: () => void
}) {
  const first = adapter.ipv4[0]
  const [f, setF] = useState<FormState>({
    mode: adapter.mode === 'dhcp' ? 'dhcp' : 'static', address: first?.address ?? '', prefix: first ? String(first.prefix) : '24',
    gateway: adapter.gateway ?? '', dns: '', searchDomains: '', confirmSeconds: '',
  })
  const [errors, setErrors] = useState<Partial<Record<Field, string>>>({})
  const [failure, setFailure] = useState<Failure | null>(null)
  const [lost, setLost] = useState<AdapterChange | null>(null)
  const [busy, setBusy] = useState(false)
  useEffect(() => { document.getElementById('adapter-form-heading')?.focus() }, [])
  const set = (key: keyof FormState) => (e: Event) => setF({ ...f, [key]: (e.target as HTMLInputElement).value })
  const show = (p: ChangeProblem) => {
    const field = fieldOf(p.field)
    if (!field) return false
    const { value } = p.extra
    setErrors({ [field]: `${value === undefined ? FIELDS[field] : `“${String(value)}”`} ${p.reason}.` })
    document.getElementById(`net-${field}`)?.focus()
    return true
  }
  const submit = async (event: Event) => {
    event.preventDefault()
    setErrors({})
    setFailure(null)
    setLost(null)
    const built = build(adapter.name, f)
    if ('problem' in built) { show(built.problem); return }
    setBusy(true)
    try {
      await client.call('/gtw/cwai/network/SetAdapter', built.change)
      onApplied()
    } catch (e) {
      const item = e instanceof DeviceError ? e.item : undefined
      if (item?.messageKey === 'api.error.InvalidParam' && show({ field: String(item.details.field ?? ''), reason: String(item.details.reason ?? item.msgText), extra: item.details })) return
      if (e instanceof NetworkError) setLost(built.change)
      setFailure({ error: e, context: `Change ${adapter.name}` })
    } finally {
      setBusy(false)
    }
  }
  const input = (field: Field, props: Record<string, unknown>) => html`<label>${FIELDS[field]}
    <input id=${`net-${field}`} ...${props} aria-invalid=${errors[field] ? 'true' : undefined} aria-describedby=${errors[field] ? `net-${field}-error` : undefined} data-testid=${`net-${field}`} />
    ${errors[field] ? html`<span class="field-error" id=${`net-${field}-error`} data-testid=${`net-${field}-error`}>${errors[field]}</span>` : null}
  </label>`
  const statics = f.mode === 'static'
  return html`<form class="panel stack" onSubmit=${submit} aria-busy=${busy} aria-labelledby="adapter-form-heading" novalidate data-testid="adapter-form">
    <h2 id="adapter-form-heading" tabindex="-1">Change ${adapter.name}</h2>
    ${errors.adapter ? html`<p class="field-error" id="net-adapter" tabindex="-1" data-testid="net-adapter-error">${errors.adapter}</p>` : null}
    <fieldset class="toggles"><legend>${FIELDS.mode}</legend>
      <label><input type="radio" name="net-mode" value="static" checked=${statics} onChange=${() => setF({ ...f, mode: 'static' })} data-testid="net-static" /> Static address</label>
      <label><input type="radio" name="net-mode" value="dhcp" checked=${!statics} onChange=${() => setF({ ...f, mode: 'dhcp' })} data-testid="net-dhcp" /> DHCP</label>
    </fieldset>
    ${statics ? html`<div class="net-fields">
      ${input('address', { value: f.address, onInput: set('address'), inputmode: 'decimal', autocomplete: 'off', placeholder: '192.168.1.20' })}
      ${input('prefix', { value: f.prefix, onInput: set('prefix'), type: 'number', min: 8, max: 30 })}
      ${input('gateway', { value: f.gateway, onInput: set('gateway'), inputmode: 'decimal', autocomplete: 'off' })}
    </div>` : null}
    ${input('dns', { value: f.dns, onInput: set('dns'), autocomplete: 'off' })}
    ${input('searchDomains', { value: f.searchDomains, onInput: set('searchDomains'), autocomplete: 'off' })}
    <p class="hint">DNS servers (up to ${L.dns}) and search domains (up to ${L.searchDomains}), separated by spaces or commas; empty keeps the current ones${dns?.servers.length ? ` (${dns.servers.join(', ')})` : ''}.</p>
    ${input('confirmTimeoutSeconds', { value: f.confirmSeconds, onInput: set('confirmSeconds'), type: 'number', min: L.confirmSeconds.min, max: L.confirmSeconds.max, placeholder: 'device default' })}
    <p class="hint">The change applies at once. Unless it is confirmed within the time to confirm (seconds; empty: the device's default), the device puts the previous configuration back by itself, so a wrong setting cannot lock you out.</p>
    <div class="row">
      <button type="submit" disabled=${busy} data-testid="net-apply">${busy ? 'Applying…' : 'Apply'}</button>
      <button type="button" class="secondary" onClick=${onCancel}>Cancel</button>
    </div>
    ${lost ? html`<p class="notice" role="status" data-testid="net-lost">The device did not answer. If the change moved the address this console uses, ${lost.address
      ? html`<a href=${consoleAt(lost.address)} target="_blank" rel="noopener">open the console at ${lost.address}</a>`
      : 'open the console at the address DHCP gave the adapter'}, sign in and confirm there; unconfirmed, the previous configuration comes back by itself.</p>` : null}
    <${ErrorPanel} ...${failure} />
  </form>`
}

/** How this console stands to a change that moves the adapter's address: where to confirm it. */
function AddressAdvice({ change }: { change: PendingChange }) {
  const target = change.config.mode === 'static' ? change.config.address! : null
  const given = change.previousAddresses.filter((a) => a !== target)
  if (!given.length) return null
  const here = location.hostname.replace(/^\[|\]$/g, '')
  const from = given.join(', ')
  const standing = given.includes(here)
    ? `This console reaches the device through ${here}, which the change takes away: the device refuses a confirmation from here.`
    : ipVersion(here) ? `This console reaches the device through ${here}, which the change does not touch: Confirm works here too.`
    : `If you reached the device through ${from}, the device refuses a confirmation from there.`
  return html`<div class="notice stack" data-testid="address-advice">
    <p>The adapter's address moves from ${from} to ${target ?? 'the one DHCP gives it'}. ${standing}</p>
    <p>${target
      ? html`<a class="button" href=${consoleAt(target)} target="_blank" rel="noopener" data-testid="new-address-link">Open the console at ${target}</a> then sign in there and confirm: reaching the device at its new address is the proof that the change works.`
      : 'Open the console at the address the DHCP server leased (see its leases), sign in there and confirm.'}</p>
  </div>`
}

const describeConfig = ({ config }: PendingChange) => [
  config.mode === 'dhcp' ? 'DHCP' : `static ${config.address}/${config.prefix}${config.gateway ? `, gateway ${config.gateway}` : ', no gateway'}`,
  config.dns ? `DNS ${config.dns.join(', ')}` : null,
  config.searchDomains ? `search ${config.searchDomains.join(' ')}` : null,
].filter(Boolean).join('; ')

const clock = (ms: number) => {
  const s = Math.max(0, Math.ceil(ms / 1000))
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`
}

/**
 * A change waiting for its confirmation (QueryChange): the countdown to `confirmBy` on the
 * device's clock (`deadline` is that moment on this browser's clock), Confirm and Revert.
 */
export function PendingPanel({ client, change, deadline, reachable, onDone }: {
  client: DeviceClient; change: PendingChange; deadline: number; reachable: boolean; onDone: () => void
}) {
  const [left, setLeft] = useState(deadline - Date.now())
  const [failure, setFailure] = useState<Failure | null>(null)
  useEffect(() => {
    const timer = setInterval(() => setLeft(deadline - Date.now()), 250)
    return () => clearInterval(timer)
  }, [deadline])
  const act = async (route: 'ConfirmChange' | 'RevertChange', context: string) => {
    setFailure(null)
    try {
      await client.call(`${NET}${route}` as const, { changeId: change.changeId })
      onDone()
    } catch (e) {
      setFailure({ error: e, context })
    }
  }
  return html`<section class="panel stack pending" aria-labelledby="pending-heading" data-testid="pending-change">
    <h2 id="pending-heading">The change of ${change.adapter} waits for confirmation</h2>
    <p>Applied: ${describeConfig(change)} (through ${change.backend}${change.requestedBy ? `, by ${change.requestedBy}` : ''}).</p>
    <p class="countdown" role="timer" data-testid="countdown">${left > 0 ? `${clock(left)} left to confirm` : 'Time is up: the device is putting the previous configuration back…'}</p>
    <p data-testid="timeout-explained">Unless it is confirmed by ${new Date(deadline).toLocaleTimeString()}, the device restores the previous configuration by itself (the change is rolled back), so a wrong setting cannot lock you out.</p>
    ${reachable ? null : html`<p class="notice" role="status" data-testid="unreachable">The device does not answer here any more: that is expected when the change moved the address this console uses.</p>`}
    <${AddressAdvice} change=${change} />
    <div class="row">
      <button type="button" onClick=${() => act('ConfirmChange', 'Confirm')} data-testid="confirm-change">Confirm</button>
      <button type="button" class="secondary" onClick=${() => act('RevertChange', 'Revert')} data-testid="revert-change">Revert now</button>
    </div>
    <${ErrorPanel} ...${failure} />
  </section>`
}
