import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import { isAbort } from '../../client/errors.ts'
import { uploadFile } from '../../client/upload.ts'
import { JPEG_KINDS, LOG_LEVELS, LOGO_ROUTE, type DebugSettings, type DriftSample, type ImageQuality, type LogFileInfo, type LogoInfo, type TimeStatus } from '../../../shared/system/types.ts'
import { ErrorPanel, type Failure } from '../components/ErrorPanel.ts'
import { formatBytes } from '../messages.ts'
import { saveFile } from '../save-file.ts'
import { browserResumeStore, resumeKeyOf } from '../session.ts'

const SYSTEM = '/gtw/cwai/System/'
/** The console's header shows the logo; this page tells it when the logo changed. */
export const LOGO_CHANGED = 'device-logo-changed'
const KIND_LABELS = { overlay: 'Detection overlays', snapshot: 'Stream snapshots', capture: 'Camera captures' } as const

/** One panel's state: what the device answered, a notice, an error; `run` wraps a call. */
function usePanel<T>(client: DeviceClient, route: string) {
  const [value, setValue] = useState<T | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const [error, setError] = useState<Failure | null>(null)
  useEffect(() => { client.call<T>(`${SYSTEM}${route}`, {}).then(setValue, (e) => setError({ error: e, context: route })) }, [])
  const run = async (context: string, work: () => Promise<string | null>) => {
    setError(null)
    setNotice(null)
    try {
      setNotice(await work())
    } catch (e) {
      if (!isAbort(e)) setError({ error: e, context })
    }
  }
  const messages = (id: string) => html`${notice ? html`<p class="notice" role="status" data-testid=${`${id}-notice`}>${notice}</p>` : null}<${ErrorPanel} ...${error} />`
  return { value, setValue, run, messages }
}

/**
 * System settings (docs/system.md "System settings", spec 4.10 System): time, image quality, logo and
 * debug, one panel each.
 */
export function System({ client, account }: { client: DeviceClient; account: string }) {
  return html`<main class="system" id="main">
    <h1 tabindex="-1">System</h1>
    <div class="stack">
      <${Time} client=${client} />
      <${Quality} client=${client} />
      <${Logo} client=${client} account=${account} />
      <${Debug} client=${client} />
    </div>
  </main>`
}

function Time({ client }: { client: DeviceClient }) {
  const { value, setValue, run, messages } = usePanel<TimeStatus>(client, 'QueryTimeParam')
  // null until the fields hold the current settings: the fields stay disabled until then, since
  // what is typed before would be overwritten (the settings arrive, then an effect fills them in).
  const [zone, setZone] = useState<string | null>(null)
  const [servers, setServers] = useState('')
  const [drift, setDrift] = useState<DriftSample[] | null>(null)
  useEffect(() => { if (value) { setZone(value.timeZone); setServers(value.ntpServers.join('\n')) } }, [value?.timeZone, value?.ntpServers.join()])
  const loaded = value !== null && zone !== null
  const save = (event: Event) => {
    event.preventDefault()
    const ntpServers = servers.split(/[\s,]+/).filter(Boolean)
    run('Save time', async () => {
      const changed = ntpServers.join() !== value!.ntpServers.join()
      // `loaded` (the form is shown) means the zone was read.
      const status = await client.call('/gtw/cwai/System/SetTimeParam', { timeZone: zone!, ...(changed ? { ntpServers } : {}) })
      setValue(status)
      return `Saved: ${status.timeZone}, local time ${status.localTime}.`
    })
  }
  return html`<form class="panel stack" onSubmit=${save} aria-labelledby="time-heading">
    <h2 id="time-heading">Time</h2>
    ${value ? html`<dl class="facts">
      <dt>Local time</dt><dd data-testid="local-time">${value.localTime}</dd>
      <dt>Time service</dt><dd data-testid="time-service">${value.timeService.type ?? `none: ${value.timeService.reason}`}</dd>
    </dl>` : null}
    <label>Time zone (IANA)<input list="time-zones" required disabled=${!loaded} value=${zone ?? ''} onInput=${(e: Event) => setZone((e.target as HTMLInputElement).value)} data-testid="time-zone" /></label>
    <datalist id="time-zones">${Intl.supportedValuesOf('timeZone').map((z) => html`<option value=${z} />`)}</datalist>
    <label>NTP servers (one per line)<textarea rows="3" disabled=${!loaded} value=${servers} onInput=${(e: Event) => setServers((e.target as HTMLTextAreaElement).value)} data-testid="ntp-servers"></textarea></label>
    <div class="row">
      <button type="submit" disabled=${!loaded} data-testid="time-save">Save</button>
      <button type="button" class="secondary" onClick=${() => run('Measure drift', async () => { setDrift((await client.call('/gtw/cwai/System/QueryTimeDrift', {})).samples); return null })}>Measure drift</button>
    </div>
    ${drift ? html`<ul data-testid="drift">${drift.length ? drift.map((d) => html`<li>${d.server}: ${d.error ?? `offset ${d.offsetMs} ms, delay ${d.delayMs} ms, stratum ${d.stratum}`}</li>`) : html`<li>No NTP servers configured.</li>`}</ul>` : null}
    ${messages('time')}
  </form>`
}

function Quality({ client }: { client: DeviceClient }) {
  const { value, setValue, run, messages } = usePanel<ImageQuality>(client, 'QueryImageQualityParam')
  const change = (kind: keyof ImageQuality, key: 'quality' | 'maxSide') => (e: Event) =>
    setValue({ ...value!, [kind]: { ...value![kind], [key]: Number((e.target as HTMLInputElement).value) } })
  const save = (event: Event) => {
    event.preventDefault()
    run('Save image quality', async () => { setValue(await client.call('/gtw/cwai/System/SetImageQualityParam', value)); return 'Saved: the next pictures use these settings.' })
  }
  return html`<form class="panel stack" onSubmit=${save} aria-labelledby="quality-heading">
    <h2 id="quality-heading">Image quality</h2>
    <p class="hint">JPEG quality (1-100) and longest side in pixels (0 = full size) of the pictures the device makes.</p>
    ${value ? html`<div class="table-wrap"><table data-testid="image-quality">
      <thead><tr><th scope="col">Pictures</th><th scope="col">Quality</th><th scope="col">Longest side</th></tr></thead>
      <tbody>${JPEG_KINDS.map((kind) => html`<tr>
        <th scope="row">${KIND_LABELS[kind]}</th>
        <td><input type="number" min="1" max="100" required aria-label=${`${KIND_LABELS[kind]} quality`} value=${value[kind].quality} onInput=${change(kind, 'quality')} /></td>
        <td><input type="number" min="0" max="16384" required aria-label=${`${KIND_LABELS[kind]} longest side`} value=${value[kind].maxSide} onInput=${change(kind, 'maxSide')} /></td>
      </tr>`)}</tbody>
    </table></div>` : null}
    <div class="row"><button type="submit" disabled=${!value} data-testid="quality-save">Save</button></div>
    ${messages('quality')}
  </form>`
}

function Logo({ client, account }: { client: DeviceClient; account: string }) {
  const { value, setValue, run, messages } = usePanel<LogoInfo>(client, 'QueryLogo')
  const [src, setSrc] = useState<string | null>(null)
  const [file, setFile] = useState<File | null>(null)
  useEffect(() => {
    if (!value) return
    let url: string | null = null
    client.getFile(LOGO_ROUTE).then((logo) => { url = URL.createObjectURL(logo.blob); setSrc(url) }, () => setSrc(null))
    return () => { if (url) URL.revokeObjectURL(url) }
  }, [value?.updatedAt, value?.custom])
  const changed = (info: LogoInfo) => { setValue(info); dispatchEvent(new Event(LOGO_CHANGED)) }
  const upload = (event: Event) => {
    event.preventDefault()
    if (!file) return
    run('Upload logo', async () => {
      const { uploadId } = await uploadFile(client, { name: file.name, size: file.size, slice: (a, b) => file.slice(a, b) }, { purpose: 'logo', resumeKey: `logo|${resumeKeyOf(account, file)}`, store: browserResumeStore })
      const info = await client.call('/gtw/cwai/System/SetLogo', { uploadId })
      changed(info)
      setFile(null)
      return info.removed.length ? `Logo saved. Removed from the SVG: ${info.removed.join(', ')}.` : 'Logo saved.'
    })
  }
  return html`<form class="panel stack" onSubmit=${upload} aria-labelledby="logo-heading">
    <h2 id="logo-heading">Logo</h2>
    <div class="row">
      ${src ? html`<img class="logo-preview" src=${src} alt="Current logo" data-testid="logo-preview" />` : null}
      ${value ? html`<p class="hint" data-testid="logo-info">${value.custom ? 'Uploaded' : 'Default'} · ${value.contentType} · ${value.width}×${value.height} · ${formatBytes(value.sizeBytes, true)}</p>` : null}
    </div>
    <label class="drop">
      <input type="file" class="sr-only" accept="image/png,image/jpeg,image/svg+xml,.svg" data-testid="logo-file"
        onChange=${(e: Event) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)} />
      <span>${file ? html`<strong>${file.name}</strong>` : 'Choose a PNG, JPEG or SVG logo'}</span>
    </label>
    <div class="row">
      <button type="submit" disabled=${!file} data-testid="logo-upload">Upload</button>
      <button type="button" class="secondary" disabled=${!value?.custom} data-testid="logo-reset"
        onClick=${() => run('Reset logo', async () => { changed(await client.call('/gtw/cwai/System/ResetLogo', {})); return 'The default logo is back.' })}>Reset to default</button>
    </div>
    ${messages('logo')}
  </form>`
}

function Debug({ client }: { client: DeviceClient }) {
  const { value, setValue, run, messages } = usePanel<DebugSettings>(client, 'QueryDebugParam')
  const [files, setFiles] = useState<LogFileInfo[]>([])
  const loadFiles = () => client.call('/gtw/cwai/System/QueryLogFiles', {}).then((p) => setFiles(p.rows), () => undefined)
  useEffect(() => { loadFiles() }, [])
  const save = (event: Event) => {
    event.preventDefault()
    run('Save debug settings', async () => {
      const areas = Object.fromEntries(value!.areas.map((a) => [a.name, a.debug]))
      setValue(await client.call('/gtw/cwai/System/SetDebugParam', { logLevel: value!.logLevel, areas }))
      return 'Applied: the device logs with these settings now.'
    })
  }
  return html`<form class="panel stack" onSubmit=${save} aria-labelledby="debug-heading">
    <h2 id="debug-heading">Debug</h2>
    ${value ? html`<label>Log level<select value=${value.logLevel} data-testid="debug-level"
        onChange=${(e: Event) => setValue({ ...value, logLevel: (e.target as HTMLSelectElement).value as DebugSettings['logLevel'] })}>
        ${LOG_LEVELS.map((l) => html`<option value=${l}>${l}</option>`)}
      </select></label>
      <fieldset class="toggles" data-testid="debug-areas"><legend>Debug logging per area</legend>
        ${value.areas.map((a) => html`<label><input type="checkbox" checked=${a.debug}
          onChange=${(e: Event) => setValue({ ...value, areas: value.areas.map((b) => b.name === a.name ? { ...b, debug: (e.target as HTMLInputElement).checked } : b) })} /> ${a.name}</label>`)}
      </fieldset>` : null}
    <div class="row"><button type="submit" disabled=${!value} data-testid="debug-save">Apply</button></div>
    ${messages('debug')}
    <h3>Log files</h3>
    <ul data-testid="log-files">${files.map((f) => html`<li>
      <button type="button" class="link" onClick=${() => run(`Download ${f.name}`, async () => { saveFile(await client.getFile(`${SYSTEM}DownloadLog?name=${encodeURIComponent(f.name)}`)); return null })}>${f.name}</button>
      · ${formatBytes(f.sizeBytes, true)}${f.active ? ' · being written' : ''}
    </li>`)}</ul>
  </form>`
}
