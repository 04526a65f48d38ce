import { html } from 'htm/preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { CameraAddRequest, CameraUpdateRequest, CameraView, SourceType, UsbDevice } from '../../client/types.ts'
import type { UploadProgress } from '../../client/upload.ts'
import { ErrorPanel } from '../components/ErrorPanel.ts'
import { formatBytes } from '../messages.ts'
import { useSteps } from '../steps.ts'
import { uploadBrowserFile } from '../upload.ts'

const VIDEO_ACCEPT = 'video/*,.mp4,.mkv,.mov,.avi,.ts'

/** The source types (docs/cameras-and-stream-tasks.md "Cameras") and what each asks for. */
const SOURCES: Record<SourceType, { label: string; urlHint?: string }> = {
  rtsp: { label: 'RTSP stream', urlHint: 'rtsp://192.168.1.64:554/stream1 (RTSP over TCP)' },
  http: { label: 'HTTP snapshot or MJPEG', urlHint: 'http://192.168.1.64/snapshot.jpg, or an MJPEG stream' },
  file: { label: 'Video file (played in a loop)' },
  usb: { label: 'USB camera (V4L2)' },
}

/** A URL as the device shows it (`user:***@host`) without its user info: credentials have their own fields. */
const withoutUserInfo = (url: string | null) => (url ?? '').replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, '$1')

/**
 * Adds a camera, or edits one (`camera` given): the source type's own fields (docs/cameras-and-stream-tasks.md "Cameras").
 * The password is never shown back: left empty on edit it is kept. A video file goes through the
 * resumable chunked upload (purpose `video`, spec 4.5, 4.12) first.
 */
export function CameraForm({ client, account, camera, onSaved, onCancel }: {
  client: DeviceClient
  account: string
  camera: CameraView | null
  onSaved: (message: string) => void
  onCancel: () => void
}) {
  const [name, setName] = useState(camera?.cameraName ?? '')
  const [type, setType] = useState<SourceType>(camera?.sourceType ?? 'rtsp')
  const [url, setUrl] = useState(withoutUserInfo(camera?.url ?? null))
  const [username, setUsername] = useState(camera?.username ?? '')
  const [password, setPassword] = useState('')
  const [removePassword, setRemovePassword] = useState(false)
  const [device, setDevice] = useState(camera?.device ?? '')
  const [file, setFile] = useState<File | null>(null)
  const [verify, setVerify] = useState(true)
  const [usb, setUsb] = useState<UsbDevice[] | null>(null)
  const [usbError, setUsbError] = useState<unknown>(null)
  const [progress, setProgress] = useState<UploadProgress | null>(null)
  const { step, busy, failure: error, setFailure: setError, run } = useSteps<'upload' | 'connect'>()
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    // Edit was chosen in the list: the form is where the work goes on.
    if (camera) heading.current?.focus()
  }, [])

  const loadUsb = () => client.cameraUsbList().then((list) => {
    setUsb(list.rows)
    setUsbError(null)
    if (!device && list.rows[0]) setDevice(list.rows[0].device)
  }, setUsbError)
  useEffect(() => { if (type === 'usb') loadUsb() }, [type])

  const hasUrl = type === 'rtsp' || type === 'http'
  // An edit sends only what changed: an unchanged source is not connected again.
  const changes = (): Omit<CameraUpdateRequest, 'cameraId'> => {
    const c = camera!
    return {
      ...(name !== c.cameraName ? { cameraName: name } : {}),
      ...(hasUrl && url !== withoutUserInfo(c.url) ? { url } : {}),
      ...(hasUrl && username !== (c.username ?? '') ? { username } : {}),
      ...(hasUrl && (password || removePassword) ? { password: removePassword ? '' : password } : {}),
      ...(type === 'usb' && device !== c.device ? { device } : {}),
    }
  }

  const submit = (event: Event) => {
    event.preventDefault()
    setProgress(null)
    void run(async (enter, signal) => {
      let uploadId: string | undefined
      if (type === 'file' && file) {
        enter('upload', 'Upload')
        uploadId = await uploadBrowserFile(client, account, file, 'video', { onProgress: setProgress, signal })
      }
      enter('connect', camera ? `Save ${camera.cameraName}` : 'Add camera')
      if (camera) {
        await client.cameraUpdate({ cameraId: camera.cameraId, ...changes(), ...(uploadId ? { uploadId } : {}), verify }, { signal })
        onSaved(`Saved camera ${name}.`)
      } else {
        const request: CameraAddRequest = {
          cameraName: name, sourceType: type, verify,
          ...(hasUrl ? { url, ...(username ? { username } : {}), ...(password ? { password } : {}) } : {}),
          ...(type === 'usb' ? { device } : {}),
          ...(uploadId ? { uploadId } : {}),
        }
        await client.cameraAdd(request, { signal })
        onSaved(`Added camera ${name}.`)
      }
    })
  }

  const complete = name.trim() !== '' && (hasUrl ? url !== '' : type === 'usb' ? device !== '' : !!file || !!camera)
  const percent = progress ? Math.round((progress.sentBytes / Math.max(1, progress.totalBytes)) * 100) : 0
  const title = camera ? `Edit ${camera.cameraName}` : 'Add a camera'
  return html`<form class="panel stack" onSubmit=${submit} aria-busy=${busy} aria-labelledby="camera-form-heading" data-testid="camera-form">
    <h2 id="camera-form-heading" tabindex="-1" ref=${heading}>${title}</h2>
    <label>Name
      <input name="cameraName" value=${name} required maxLength=${128} disabled=${busy} data-testid="camera-name"
        onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} />
    </label>
    <label>Source type
      <select name="sourceType" value=${type} disabled=${busy || !!camera} data-testid="camera-type"
        onChange=${(e: Event) => { setType((e.target as HTMLSelectElement).value as SourceType); setError(null) }}>
        ${Object.entries(SOURCES).map(([value, s]) => html`<option value=${value}>${s.label}</option>`)}
      </select>
    </label>
    ${camera ? html`<p class="hint">The source type of a camera does not change: add a new camera for another kind of source.</p>` : null}
    ${hasUrl ? html`
      <label>URL
        <input name="url" type="url" value=${url} required maxLength=${2048} disabled=${busy} data-testid="camera-url" aria-describedby="camera-url-hint"
          onInput=${(e: Event) => setUrl((e.target as HTMLInputElement).value.trim())} />
      </label>
      <p class="hint" id="camera-url-hint">${SOURCES[type].urlHint}</p>
      <div class="grid">
        <label>User name (optional)
          <input name="username" value=${username} maxLength=${256} autocomplete="off" disabled=${busy} data-testid="camera-username"
            onInput=${(e: Event) => setUsername((e.target as HTMLInputElement).value)} />
        </label>
        <label>Password${camera ? ' (leave empty to keep it)' : ' (optional)'}
          <input name="password" type="password" value=${password} maxLength=${256} autocomplete="new-password" disabled=${busy || removePassword} data-testid="camera-password"
            onInput=${(e: Event) => setPassword((e.target as HTMLInputElement).value)} />
        </label>
      </div>
      ${camera ? html`<label class="check"><input type="checkbox" checked=${removePassword} disabled=${busy}
        onChange=${(e: Event) => setRemovePassword((e.target as HTMLInputElement).checked)} /> Remove the stored password</label>` : null}` : null}
    ${type === 'file' ? html`
      <label class="drop">
        <input type="file" class="sr-only" accept=${VIDEO_ACCEPT} disabled=${busy} data-testid="camera-video"
          onChange=${(e: Event) => { setFile((e.target as HTMLInputElement).files?.[0] ?? null); setError(null) }} />
        <span>${file ? html`<strong>${file.name}</strong> · ${formatBytes(file.size, true)}`
          : camera ? html`Playing <strong>${camera.videoName ?? 'a video'}</strong>. Choose another video to replace it.` : 'Choose a video file (for example an H.264 MP4)'}</span>
      </label>` : null}
    ${type === 'usb' ? html`
      <label>Device
        <select name="device" value=${device} disabled=${busy || !usb?.length} data-testid="camera-device"
          onChange=${(e: Event) => setDevice((e.target as HTMLSelectElement).value)}>
          ${usb === null && !usbError ? html`<option value="">Looking for USB cameras…</option>` : null}
          ${usb?.length === 0 ? html`<option value="">No USB camera found on the device</option>` : null}
          ${(usb ?? []).map((d) => html`<option value=${d.device}>${d.name ? `${d.name} (${d.device})` : d.device}</option>`)}
        </select>
      </label>
      <div class="row"><button type="button" class="secondary" disabled=${busy} onClick=${loadUsb}>Look again</button></div>
      <${ErrorPanel} error=${usbError} context="USB cameras" />` : null}
    <label class="check"><input type="checkbox" checked=${!verify} disabled=${busy} data-testid="camera-no-verify"
      onChange=${(e: Event) => setVerify(!(e.target as HTMLInputElement).checked)} /> Save even if the camera cannot be reached now (the device keeps trying)</label>
    <div class="row">
      <button type="submit" disabled=${busy || !complete} data-testid="camera-save">${camera ? 'Save' : 'Add camera'}</button>
      ${camera ? html`<button type="button" class="secondary" disabled=${busy} onClick=${onCancel}>Cancel</button>` : null}
    </div>
    ${busy ? html`<p role="status" data-testid="camera-step">${step === 'upload' ? 'Uploading the video…' : 'Connecting to the camera…'}</p>` : null}
    ${progress ? html`<div class="progress">
      <progress max="100" value=${percent} aria-label="Video upload progress"></progress>
      <span>${percent}% · ${formatBytes(progress.sentBytes, true)} of ${formatBytes(progress.totalBytes, true)}</span>
    </div>` : null}
    <${ErrorPanel} ...${error} />
  </form>`
}
