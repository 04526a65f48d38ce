import type { EventKind } from '../../../shared/events/kinds.ts'
import { html } from 'htm/preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import { DeviceError } from '../../client/errors.ts'
import type { CameraCapture, CameraView, DeviceEvent } from '../../client/types.ts'
import { ConfirmDialog } from '../components/ConfirmDialog.ts'
import { ErrorPanel, type Failure } from '../components/ErrorPanel.ts'
import { localTime } from '../format.ts'
import { useLiveEvents } from '../live-events.ts'
import { usePicture } from '../picture.ts'
import { useFocusAfter } from '../focus.ts'
import { CameraForm } from './CameraForm.ts'

/** The list is read again this often, and at once on every camera.online / camera.offline event. */
const REFRESH_MS = 5000
const STATUS_TEXT = { online: 'Online', connecting: 'Connecting', offline: 'Offline' } as const

/** The events a camera's "Last event" shows: what its stream tasks saw. */
const LAST_EVENT_KINDS: EventKind[] = ['object.entered', 'object.recognized', 'alarm.raised']
/** A camera's thumbnail is captured again this often while the page is shown. */
const THUMBNAIL_MS = 30_000

/** What a camera reads: its URL (credentials shown as the device shows them), device or video. */
const sourceOf = (c: CameraView) => c.url ?? c.device ?? c.videoName ?? '-'
const sizeOf = (c: CameraView) => (c.width && c.height ? `${c.width} × ${c.height}` : '-')

/**
 * Cameras (spec 4.10 Camera, docs/cameras-and-stream-tasks.md "Cameras"): the list with each camera's live status, the
 * add and edit form, a preview of the current frame, and deletion, which the device refuses
 * while stream tasks analyse the camera unless forced.
 */
export function Cameras({ client, account }: { client: DeviceClient; account: string }) {
  const [rows, setRows] = useState<CameraView[] | null>(null)
  const [listError, setListError] = useState<unknown>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const [editing, setEditing] = useState<CameraView | null>(null)
  // A new key gives an empty form after a save.
  const [formKey, setFormKey] = useState(0)
  const [preview, setPreview] = useState<CameraView | null>(null)
  const [deleting, setDeleting] = useState<{ camera: CameraView; inUse: unknown; busy: boolean } | null>(null)
  const [deleteError, setDeleteError] = useState<Failure | null>(null)
  // The deleted camera's row is gone: focus goes to the list once the dialog has closed.
  const listFocus = useFocusAfter<HTMLHeadingElement>(!!deleting)

  // Each camera's newest event of LAST_EVENT_KINDS: read once per camera, then kept by the live events.
  const [lastEvents, setLastEvents] = useState<Record<string, DeviceEvent | null>>({})
  const asked = useRef(new Set<string>())
  const lastEventOf = (cameraId: string) => {
    asked.current.add(cameraId)
    client.eventPage({ cameraId, kinds: LAST_EVENT_KINDS, pageSize: 1 })
      .then((page) => setLastEvents((known) => ({ ...known, [cameraId]: known[cameraId] ?? page.rows[0] ?? null })), () => undefined)
  }

  const load = () => client.polling.cameraPage({ pageSize: 500 }).then((page) => {
    setRows(page.rows)
    setListError(null)
    for (const c of page.rows) if (!asked.current.has(c.cameraId)) lastEventOf(c.cameraId)
  }, setListError)
  useEffect(() => {
    load()
    const timer = setInterval(load, REFRESH_MS)
    return () => clearInterval(timer)
  }, [])
  useLiveEvents(client, {
    kinds: ['camera.online', 'camera.offline', ...LAST_EVENT_KINDS],
    onEvent: (event: DeviceEvent) => {
      if (!LAST_EVENT_KINDS.includes(event.kind)) return void load()
      const cameraId = event.payload.cameraId
      if (typeof cameraId === 'string') setLastEvents((known) => ({ ...known, [cameraId]: event }))
    },
  })

  const edit = (camera: CameraView) => {
    setNotice(null)
    setEditing(camera)
    setFormKey((k) => k + 1)
  }
  const saved = (message: string) => {
    setNotice(message)
    setEditing(null)
    setFormKey((k) => k + 1)
    load()
  }

  const remove = async () => {
    const { camera, inUse } = deleting!
    setDeleting({ camera, inUse, busy: true })
    try {
      // The second confirmation, after the device said tasks use it, forces (docs/cameras-and-stream-tasks.md "Cameras").
      await client.cameraDelete(camera.cameraId, !!inUse)
      listFocus.later()
      setDeleting(null)
      if (preview?.cameraId === camera.cameraId) setPreview(null)
      if (editing?.cameraId === camera.cameraId) saved(`Deleted camera ${camera.cameraName}.`)
      else { setNotice(`Deleted camera ${camera.cameraName}.`); load() }
    } catch (e) {
      if (e instanceof DeviceError && e.messageKey === 'api.error.CameraInUse' && !inUse) setDeleting({ camera, inUse: e, busy: false })
      else { setDeleting(null); setDeleteError({ error: e, context: `Delete ${camera.cameraName}` }) }
    }
  }

  return html`<main class="cameras" id="main">
    <h1 tabindex="-1">Cameras</h1>
    <div class="stack">
      <section class="panel stack" aria-labelledby="camera-list-heading">
        <h2 id="camera-list-heading" tabindex="-1" ref=${listFocus.target}>Cameras on the device${rows ? html` <span class="badge" data-testid="camera-count">${rows.length}</span>` : null}</h2>
        <${ErrorPanel} error=${listError} context="Camera list" />
        ${notice ? html`<p class="notice" role="status" data-testid="cameras-notice">${notice}</p>` : null}
        <${ErrorPanel} ...${deleteError} />
        ${rows === null && !listError ? html`<p class="hint">Loading…</p>` : null}
        ${rows?.length === 0 ? html`<p data-testid="no-cameras">No cameras yet: add one below.</p>` : null}
        ${rows?.length ? html`<div class="table-wrap"><table class="cards" data-testid="cameras">
          <caption class="sr-only">Cameras with their live status</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">Recent picture</th><th scope="col">Last event</th><th scope="col">Source</th><th scope="col">Status</th><th scope="col">Resolution</th><th scope="col">Frame rate</th><th scope="col">Changed</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
          <tbody>${rows.map((c) => html`<tr key=${c.cameraId} data-camera-id=${c.cameraId}>
            <th scope="row" data-label="Name">${c.cameraName}</th>
            <td data-label="Recent picture"><${Thumbnail} client=${client} camera=${c} /></td>
            <td class="wrap" data-label="Last event" data-testid="camera-last-event">${eventText(lastEvents[c.cameraId])}</td>
            <td class="wrap" data-label="Source"><span class="hint">${c.sourceType}</span> <code class="wrap">${sourceOf(c)}</code></td>
            <td class="wrap" data-label="Status"><span class=${`badge status-${c.status}`} data-testid="camera-status">${STATUS_TEXT[c.status]}</span>
              ${c.lastError ? html`<div class="hint" data-testid="camera-last-error">${c.lastError}</div>` : null}</td>
            <td data-label="Resolution" data-testid="camera-size">${sizeOf(c)}</td>
            <td data-label="Frame rate" data-testid="camera-fps">${c.fps ? `${c.fps} fps` : '-'}</td>
            <td data-label="Changed">${localTime(c.updateTime)}</td>
            <td><div class="actions">
              <button type="button" class="secondary" aria-label=${`Preview ${c.cameraName}`} onClick=${() => setPreview(c)}>Preview</button>
              <a class="button secondary" href=${`#/tasks?camera=${encodeURIComponent(c.cameraId)}`} aria-label=${`Tasks of ${c.cameraName}`}>Tasks</a>
              <button type="button" class="secondary" aria-label=${`Edit ${c.cameraName}`} onClick=${() => edit(c)}>Edit</button>
              <button type="button" class="danger-outline" aria-label=${`Delete ${c.cameraName}`}
                onClick=${() => { setDeleteError(null); setNotice(null); setDeleting({ camera: c, inUse: null, busy: false }) }}>Delete</button>
            </div></td>
          </tr>`)}</tbody>
        </table></div>` : null}
      </section>
      <div class="grid">
        <${CameraForm} key=${formKey} client=${client} account=${account} camera=${editing} onSaved=${saved}
          onCancel=${() => { setEditing(null); setFormKey((k) => k + 1) }} />
        ${preview ? html`<${Preview} key=${preview.cameraId} client=${client} camera=${preview} onClose=${() => setPreview(null)} />` : null}
      </div>
    </div>
    ${deleting ? html`<${ConfirmDialog} title=${`Delete ${deleting.camera.cameraName}?`} confirmLabel=${deleting.inUse ? 'Delete anyway' : 'Delete'} busy=${deleting.busy}
      onConfirm=${remove} onCancel=${() => setDeleting(null)}>
      ${deleting.inUse
        ? html`<${ErrorPanel} error=${deleting.inUse} context="Delete" /><p>Deleting it anyway stops their analysis: the tasks are kept and wait (state “cameraDeleted”).</p>`
        : html`<p>The device stops reading <strong>${deleting.camera.cameraName}</strong> and forgets it${deleting.camera.sourceType === 'file' ? ', with its stored video' : ''}.</p>`}
    </${ConfirmDialog}>` : null}
  </main>`
}

/** A camera's last event as a line: what, which label, when. */
function eventText(event: DeviceEvent | null | undefined) {
  if (event === undefined) return html`<span class="hint">…</span>`
  if (event === null) return html`<span class="hint">None yet</span>`
  const p = event.payload
  const label = typeof p.label === 'string' ? p.label : 'object'
  const what = event.kind === 'alarm.raised' ? `Alarm${typeof p.policyName === 'string' ? ` (${p.policyName})` : ''}: ${label}`
    : event.kind === 'object.recognized' ? `${label} recognised as ${String(p.name ?? 'unknown')}`
    : `${label} entered`
  return html`<span data-testid="last-event-label" data-kind=${event.kind}>${what}</span> <time class="hint" datetime=${event.time} data-testid="last-event-time">${localTime(Date.parse(event.time))}</time>`
}

/**
 * A small recent frame of an online camera (Camera/capture), captured when the row appears and
 * every THUMBNAIL_MS while it stays.
 */
function Thumbnail({ client, camera }: { client: DeviceClient; camera: CameraView }) {
  const [capture, setCapture] = useState<CameraCapture | null>(null)
  const picture = usePicture(client, capture?.picture ?? null)
  const online = camera.status === 'online'
  useEffect(() => {
    if (!online) return
    let live = true
    const take = () => client.cameraCapture(camera.cameraId).then((c) => { if (live) setCapture(c) }, () => undefined)
    void take()
    const timer = setInterval(take, THUMBNAIL_MS)
    return () => { live = false; clearInterval(timer) }
  }, [camera.cameraId, online])
  return picture.url
    ? html`<img class="thumbnail" src=${picture.url} alt=${`Recent frame of ${camera.cameraName}`} title=${capture ? localTime(capture.timestamp) : ''} data-testid="camera-thumbnail" />`
    : html`<span class="hint">${online ? '…' : 'No picture'}</span>`
}

/** The camera's current frame (Camera/capture), captured again on request. */
function Preview({ client, camera, onClose }: { client: DeviceClient; camera: CameraView; onClose: () => void }) {
  const [capture, setCapture] = useState<CameraCapture | null>(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const picture = usePicture(client, capture?.picture ?? null)
  const heading = useRef<HTMLHeadingElement>(null)

  const take = async () => {
    setBusy(true)
    setError(null)
    try {
      setCapture(await client.cameraCapture(camera.cameraId))
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }
  useEffect(() => { heading.current?.focus(); take() }, [])

  return html`<section class="panel stack" aria-labelledby="preview-heading" data-testid="camera-preview">
    <h2 id="preview-heading" tabindex="-1" ref=${heading}>Preview of ${camera.cameraName}</h2>
    ${busy ? html`<p role="status">Capturing a frame…</p>` : null}
    <${ErrorPanel} error=${error ?? picture.error} context="Capture" />
    ${capture && picture.url ? html`<figure class="capture">
      <img src=${picture.url} alt=${`Frame from ${camera.cameraName}`} data-testid="capture-image" />
      <figcaption class="hint" data-testid="capture-caption">${capture.width} × ${capture.height} · ${localTime(capture.timestamp)}</figcaption>
    </figure>` : null}
    <div class="row">
      <button type="button" disabled=${busy} onClick=${take}>Capture again</button>
      <button type="button" class="secondary" onClick=${onClose}>Close preview</button>
    </div>
  </section>`
}
