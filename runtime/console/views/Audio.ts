import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { AudioColumnView, AudioFileView, ColumnTestResult, PlayTestResult } from '../../../shared/audio/types.ts'
import { ErrorPanel, type Failure } from '../components/ErrorPanel.ts'
import { formatBytes } from '../messages.ts'
import { useSteps } from '../steps.ts'
import { uploadBrowserFile } from '../upload.ts'

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`

/**
 * Audio (docs/audio.md "Audio", spec 4.10): files uploaded through the resumable upload (purpose
 * `audio`), their play test with a preview player, and the audio columns with their
 * connectivity test and "play on column".
 */
export function Audio({ client, account }: { client: DeviceClient; account: string }) {
  const [files, setFiles] = useState<AudioFileView[] | null>(null)
  const [columns, setColumns] = useState<AudioColumnView[] | null>(null)
  const [error, setError] = useState<Failure | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const load = () => Promise.all([
    client.call('/gtw/cwai/Audio/AudioFilePage', { pageNum: 1, pageSize: 500 }).then((p) => setFiles(p.rows)),
    client.call('/gtw/cwai/Audio/AudioColumnPage', { pageNum: 1, pageSize: 500 }).then((p) => setColumns(p.rows)),
  ]).catch((e) => setError({ error: e, context: 'Audio lists' }))
  useEffect(() => { load() }, [])
  const act = async (context: string, work: () => Promise<string | void>) => {
    setError(null)
    setNotice(null)
    try {
      const done = await work()
      if (done) setNotice(done)
      await load()
    } catch (e) {
      setError({ error: e, context })
    }
  }

  return html`<main class="audio" id="main">
    <h1 tabindex="-1">Audio</h1>
    <div class="stack">
      ${notice ? html`<p class="notice" role="status" data-testid="audio-notice">${notice}</p>` : null}
      <${ErrorPanel} ...${error} />
      <${UploadAudio} client=${client} account=${account} onAdded=${(f: AudioFileView) => { setNotice(`Added ${f.audioName} (${seconds(f.durationMs)}).`); load() }} />
      <${AudioFiles} client=${client} files=${files} act=${act} />
      <${AddColumn} act=${act} client=${client} />
      <${Columns} client=${client} columns=${columns} files=${files ?? []} act=${act} />
    </div>
  </main>`
}

type Act = (context: string, work: () => Promise<string | void>) => Promise<void>

function UploadAudio({ client, account, onAdded }: { client: DeviceClient; account: string; onAdded: (f: AudioFileView) => void }) {
  const [file, setFile] = useState<File | null>(null)
  const { busy, failure: error, setFailure: setError, run } = useSteps<'upload' | 'check'>()
  const submit = (event: Event) => {
    event.preventDefault()
    if (!file) return
    void run(async (enter, signal) => {
      enter('upload', 'Upload')
      const uploadId = await uploadBrowserFile(client, account, file, 'audio', { signal })
      enter('check', 'Check and normalize')
      onAdded(await client.call('/gtw/cwai/Audio/AddAudioFile', { uploadId }, { signal }))
      setFile(null)
    })
  }
  return html`<form class="panel stack" onSubmit=${submit} aria-busy=${busy} aria-labelledby="audio-upload-heading">
    <h2 id="audio-upload-heading">Add an audio file</h2>
    <p class="hint">WAV, MP3, Ogg, FLAC or AAC/M4A. The device checks it, evens its loudness out (-16 LUFS) and keeps it as MP3.</p>
    <label class="drop">
      <input type="file" class="sr-only" accept="audio/*,.wav,.mp3,.ogg,.flac,.m4a,.aac" disabled=${busy} data-testid="audio-file"
        onChange=${(e: Event) => { setFile((e.target as HTMLInputElement).files?.[0] ?? null); setError(null) }} />
      <span>${file ? html`<strong>${file.name}</strong> · ${formatBytes(file.size, true)}` : 'Choose an audio file'}</span>
    </label>
    <div class="row"><button type="submit" disabled=${busy || !file} data-testid="audio-upload">${busy ? 'Adding…' : 'Add'}</button></div>
    <${ErrorPanel} ...${error} />
  </form>`
}

function AudioFiles({ client, files, act }: { client: DeviceClient; files: AudioFileView[] | null; act: Act }) {
  const [test, setTest] = useState<(PlayTestResult & { src: string }) | null>(null)
  useEffect(() => () => { if (test) URL.revokeObjectURL(test.src) }, [test])
  const playTest = (f: AudioFileView) => act(`Play test ${f.audioName}`, async () => {
    const result = await client.call('/gtw/cwai/Audio/PlayTestAudioFile', { audioId: f.audioId })
    const preview = await client.getFile(result.previewUrl)
    setTest({ ...result, src: URL.createObjectURL(preview.blob) })
  })
  return html`<section class="panel stack" aria-labelledby="audio-files-heading">
    <h2 id="audio-files-heading">Audio files${files ? html` <span class="badge">${files.length}</span>` : null}</h2>
    ${files && !files.length ? html`<p class="hint">No audio files yet.</p>` : null}
    ${files?.length ? html`<div class="table-wrap"><table data-testid="audio-files">
      <thead><tr><th scope="col">Name</th><th scope="col">Format</th><th scope="col">Duration</th><th scope="col">Loudness before</th><th scope="col">Size</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${files.map((f) => html`<tr key=${f.audioId} data-audio-id=${f.audioId}>
        <th scope="row">${f.audioName}</th><td>${f.sourceFormat}</td><td>${seconds(f.durationMs)}</td>
        <td>${f.inputLoudness === null ? '-' : `${f.inputLoudness} LUFS`}</td><td>${formatBytes(f.sizeBytes, true)}</td>
        <td><div class="actions">
          <button type="button" class="secondary" aria-label=${`Play test ${f.audioName}`} onClick=${() => playTest(f)}>Play test</button>
          <button type="button" class="danger-outline" aria-label=${`Delete ${f.audioName}`} onClick=${() => act(`Delete ${f.audioName}`, async () => { await client.call('/gtw/cwai/Audio/DeleteAudioFile', { audioId: f.audioId }); return `Deleted ${f.audioName}.` })}>Delete</button>
        </div></td>
      </tr>`)}</tbody>
    </table></div>` : null}
    ${test ? html`<div class="stack" data-testid="play-test">
      <p>Decoded: <strong data-testid="decoded-duration">${seconds(test.decodedDurationMs)}</strong> · ${test.sampleRate} Hz · ${test.channels === 1 ? 'mono' : `${test.channels} channels`}</p>
      <audio controls src=${test.src} data-testid="preview"></audio>
    </div>` : null}
  </section>`
}

function AddColumn({ client, act }: { client: DeviceClient; act: Act }) {
  const [form, setForm] = useState({ columnName: '', url: '', format: 'mp3', username: '', password: '' })
  const field = (name: keyof typeof form) => (e: Event) => setForm({ ...form, [name]: (e.target as HTMLInputElement).value })
  const submit = (event: Event) => {
    event.preventDefault()
    act('Add column', async () => {
      const { username, password, ...rest } = form
      await client.call('/gtw/cwai/Audio/AddAudioColumn', { ...rest, ...(username ? { username } : {}), ...(password ? { password } : {}) })
      setForm({ columnName: '', url: '', format: 'mp3', username: '', password: '' })
      return `Added the column ${rest.columnName}.`
    })
  }
  return html`<form class="panel stack" onSubmit=${submit} aria-labelledby="column-add-heading">
    <h2 id="column-add-heading">Add an audio column</h2>
    <p class="hint">A network speaker that takes audio pushed over HTTP (POST of the whole file).</p>
    <label>Name<input required maxLength=${128} value=${form.columnName} onInput=${field('columnName')} data-testid="column-name" /></label>
    <label>URL<input required type="url" value=${form.url} placeholder="http://speaker/axis-cgi/audio/transmit.cgi" onInput=${field('url')} data-testid="column-url" /></label>
    <label>Format<select value=${form.format} onChange=${field('format')} data-testid="column-format">
      <option value="mp3">MP3 (audio/mpeg)</option><option value="wav">WAV, 16-bit PCM</option><option value="mulaw">G.711 µ-law 8 kHz (audio/basic)</option>
    </select></label>
    <label>User name (optional)<input autocomplete="off" value=${form.username} onInput=${field('username')} /></label>
    <label>Password (optional)<input type="password" autocomplete="new-password" value=${form.password} onInput=${field('password')} /></label>
    <div class="row"><button type="submit" data-testid="column-add">Add column</button></div>
  </form>`
}

function Columns({ client, columns, files, act }: { client: DeviceClient; columns: AudioColumnView[] | null; files: AudioFileView[]; act: Act }) {
  const [tests, setTests] = useState<Record<string, ColumnTestResult>>({})
  const [chosen, setChosen] = useState<Record<string, string>>({})
  const testOne = (c: AudioColumnView) => act(`Test ${c.columnName}`, async () => {
    const result = await client.call('/gtw/cwai/Audio/TestAudioColumn', { columnId: c.columnId })
    setTests((t) => ({ ...t, [c.columnId]: result }))
  })
  const play = (c: AudioColumnView) => act(`Play on ${c.columnName}`, async () => {
    const audioId = chosen[c.columnId] ?? files[0]?.audioId
    const name = files.find((f) => f.audioId === audioId)?.audioName
    const outcome = await client.call('/gtw/cwai/Audio/PlayOnAudioColumn', { columnId: c.columnId, audioId })
    return `Played ${name} on ${c.columnName}: ${formatBytes(outcome.bytesSent, true)} sent, the column answered ${outcome.httpStatus}.`
  })
  const shown = (r: ColumnTestResult) => !r.reachable ? `Unreachable (${r.error})` : `Reachable in ${r.connectMs} ms · HTTP ${r.httpStatus ?? '-'}${r.authOk === false ? ' · credentials refused' : ''}`
  return html`<section class="panel stack" aria-labelledby="columns-heading">
    <h2 id="columns-heading">Audio columns${columns ? html` <span class="badge">${columns.length}</span>` : null}</h2>
    ${columns && !columns.length ? html`<p class="hint">No audio columns yet.</p>` : null}
    ${columns?.length ? html`<div class="table-wrap"><table data-testid="audio-columns">
      <thead><tr><th scope="col">Name</th><th scope="col">URL</th><th scope="col">Format</th><th scope="col">Credentials</th><th scope="col">Test</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${columns.map((c) => html`<tr key=${c.columnId} data-column-id=${c.columnId}>
        <th scope="row">${c.columnName}</th><td><code>${c.url}</code></td><td>${c.format}</td>
        <td>${c.username ?? '-'}${c.passwordSet ? ' · password set' : ''}</td>
        <td data-testid="column-test">${tests[c.columnId] ? shown(tests[c.columnId]!) : '-'}</td>
        <td><div class="actions">
          <button type="button" class="secondary" aria-label=${`Test ${c.columnName}`} onClick=${() => testOne(c)}>Test</button>
          <select aria-label=${`File to play on ${c.columnName}`} value=${chosen[c.columnId] ?? files[0]?.audioId ?? ''} disabled=${!files.length}
            onChange=${(e: Event) => setChosen({ ...chosen, [c.columnId]: (e.target as HTMLSelectElement).value })}>
            ${files.map((f) => html`<option value=${f.audioId}>${f.audioName}</option>`)}
          </select>
          <button type="button" aria-label=${`Play on ${c.columnName}`} disabled=${!files.length} onClick=${() => play(c)}>Play</button>
          <button type="button" class="danger-outline" aria-label=${`Delete ${c.columnName}`} onClick=${() => act(`Delete ${c.columnName}`, async () => { await client.call('/gtw/cwai/Audio/DeleteAudioColumn', { columnId: c.columnId }); return `Deleted the column ${c.columnName}.` })}>Delete</button>
        </div></td>
      </tr>`)}</tbody>
    </table></div>` : null}
  </section>`
}
