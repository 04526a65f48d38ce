import { html } from 'htm/preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import { md5Hex } from '../../client/md5.ts'
import { ROUTES } from '../../client/routes.ts'
import { uploadFile, type UploadProgress } from '../../client/upload.ts'
import type { FleetPush, FleetPushKind, FleetPushRow } from '../../../shared/fleet/types.ts'
import { ErrorPanel } from '../components/ErrorPanel.ts'
import { browserResumeStore, fileSource } from '../session.ts'

/** How often a running push is read again. */
export const PUSH_POLL_MS = 500

const KINDS: { kind: FleetPushKind; label: string; accept: string }[] = [
  { kind: 'algorithm', label: 'Algorithm package (zip or tar.gz)', accept: '.zip,.tar.gz,.tgz' },
  { kind: 'upgrade', label: 'Upgrade package (<product>-V<x.y.z>-<md5>.tar.gz)', accept: '.tar.gz' },
]

const PHASES: Record<FleetPushRow['phase'], string> = {
  queued: 'Waiting', connecting: 'Signing in', uploading: 'Uploading', installing: 'Installing',
  restarting: 'Restarting into the new version', confirming: 'Confirming the running version', done: 'Done', failed: 'Failed',
}

/** One device's line: its phase (with the share uploaded), then its result or its own refusal (spec 7: messageKey and text). */
function PushRow({ row }: { row: FleetPushRow }) {
  const running = row.ok === null
  return html`<li data-testid=${`push-${row.deviceId}`} data-phase=${row.phase} data-outcome=${row.outcome ?? ''}>
    <code>${row.deviceId}</code>: ${running
      ? html`<span>${PHASES[row.phase]}${row.phase === 'uploading' && row.percent !== null ? ` ${row.percent} %` : ''}</span>
        ${row.phase === 'uploading' && row.percent !== null ? html` <progress max="100" value=${row.percent} aria-label=${`Upload to ${row.deviceId}`}></progress>` : null}`
      : row.ok
        ? html`<span data-state="ok">Done (${row.outcome}): ${row.detail}</span>`
        : html`<span data-state="refused" role="alert">${row.error?.messageKey ? html`<code>${row.error.messageKey}</code> ` : html`<code>${row.outcome}</code> `}${row.error?.msgText ?? row.detail ?? ''}${
          row.error?.recommendedAction ? html` · ${row.error.recommendedAction}` : null}${row.detail && row.error ? html` (${row.detail})` : null}</span>`}
  </li>`
}

/**
 * Pushing a package to the selected devices (docs/deployment.md "Fleet view"): the file goes to
 * this device in resumable chunks (spec 4.12), then `Fleet/push` sends it on to each target
 * with the account and password typed here (their digest only, spec 5.8), as
 * `device-cli fleet push-*` does; each device's progress and result are read back.
 */
export function FleetPushPanel({ client, selected }: { client: DeviceClient; selected: string[] }) {
  const [kind, setKind] = useState<FleetPushKind>('algorithm')
  const [file, setFile] = useState<File | null>(null)
  const [replace, setReplace] = useState(false)
  const [account, setAccount] = useState('admin')
  const [password, setPassword] = useState('')
  const [sending, setSending] = useState<UploadProgress | null>(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [push, setPush] = useState<FleetPush | null>(null)
  const live = useRef(true)
  useEffect(() => () => { live.current = false }, [])

  const follow = async (pushId: string) => {
    while (live.current) {
      const now = await client.call(ROUTES.fleetPushStatus, { pushId })
      if (!live.current) return
      setPush(now)
      if (now.finishedAt) return
      await new Promise((resolve) => setTimeout(resolve, PUSH_POLL_MS))
    }
  }

  const run = async (event: Event) => {
    event.preventDefault()
    if (!file) return
    setBusy(true)
    setError(null)
    setPush(null)
    try {
      const upload = await uploadFile(client, fileSource(file), {
        purpose: kind, resumeKey: `fleet|${kind}|${file.name}|${file.size}|${file.lastModified}`, store: browserResumeStore, retries: 3,
        onProgress: (p) => setSending(p),
      })
      const started = await client.call(ROUTES.fleetPush, {
        uploadId: upload.uploadId, kind, deviceIds: selected, replace: kind === 'algorithm' && replace, account, pwd: md5Hex(password),
      })
      setPush(started)
      await follow(started.pushId)
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }

  const sentPercent = sending ? Math.floor((100 * sending.sentBytes) / Math.max(1, sending.totalBytes)) : null
  return html`<section class="panel" aria-labelledby="fleet-push"><h2 id="fleet-push">Push a package to the selected devices</h2>
    <form onSubmit=${run}>
      <label>Package kind <select value=${kind} onChange=${(e: Event) => setKind((e.target as HTMLSelectElement).value as FleetPushKind)}>
        ${KINDS.map((k) => html`<option value=${k.kind}>${k.label}</option>`)}</select></label>
      <label>Package file <input type="file" accept=${KINDS.find((k) => k.kind === kind)!.accept} required
        onChange=${(e: Event) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)} /></label>
      ${kind === 'algorithm' ? html`<label class="check"><input type="checkbox" checked=${replace} onChange=${(e: Event) => setReplace((e.target as HTMLInputElement).checked)} /> Replace algorithms that exist already</label>` : null}
      <label>Account on the devices <input value=${account} required autocomplete="off" onInput=${(e: Event) => setAccount((e.target as HTMLInputElement).value)} /></label>
      <label>Password on the devices <input type="password" value=${password} required autocomplete="off" onInput=${(e: Event) => setPassword((e.target as HTMLInputElement).value)} /></label>
      <button type="submit" disabled=${busy || selected.length === 0 || !file}>Push to ${selected.length} device(s)</button>
      <p class="hint">The package is sent to this device first, then from it to each selected device at the address that device announces, signed in with this account (as <code>device-cli fleet push-algorithm</code> / <code>push-upgrade</code>). The device the console runs on is upgraded from its own System page.</p>
    </form>
    ${sentPercent !== null && !push ? html`<p data-testid="push-sending">Sending to this device: ${sentPercent} %</p>` : null}
    <${ErrorPanel} error=${error} context="Push" />
    ${push ? html`<ul class="fleet-results" aria-live="polite" data-testid="push-results" data-push-id=${push.pushId} data-finished=${push.finishedAt ? 'yes' : 'no'}>
      ${push.rows.map((row) => html`<${PushRow} row=${row} />`)}</ul>` : null}
  </section>`
}
