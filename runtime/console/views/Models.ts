import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { ModelRow } from '../../client/types.ts'
import type { UploadProgress } from '../../client/upload.ts'
import { ConfirmDialog } from '../components/ConfirmDialog.ts'
import { ErrorPanel, type Failure } from '../components/ErrorPanel.ts'
import { formatBytes } from '../messages.ts'
import { saveFile } from '../save-file.ts'
import { useSteps } from '../steps.ts'
import { uploadBrowserFile } from '../upload.ts'

/**
 * Managed models (docs/system.md "Models"): the list with source and size, export and delete of user
 * models, and the upload of a model file through the resumable upload (purpose `model`, spec
 * 4.5, 4.12), optionally under the `modelId` a pipeline names (e.g. `helmet-classifier`).
 */
export function Models({ client, account, uploadModelId }: { client: DeviceClient; account: string; uploadModelId: string | null }) {
  const [rows, setRows] = useState<ModelRow[] | null>(null)
  const [listError, setListError] = useState<unknown>(null)
  const [busyId, setBusyId] = useState<string | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const [error, setError] = useState<Failure | null>(null)
  const [confirming, setConfirming] = useState<ModelRow | null>(null)

  const load = () => client.modelList({ pageSize: 200 }).then((page) => { setRows(page.rows); setListError(null) }, setListError)
  useEffect(() => { load() }, [])

  const exportOne = async (row: ModelRow) => {
    if (busyId) return
    setBusyId(row.modelId)
    setError(null)
    try {
      const file = await client.modelExport(row.modelId)
      saveFile(file)
      setNotice(`Exported ${row.modelId} as ${file.fileName}.`)
    } catch (e) {
      setError({ error: e, context: `Export ${row.modelId}` })
    } finally {
      setBusyId(null)
    }
  }

  const deleteConfirmed = async () => {
    const row = confirming!
    setBusyId(row.modelId)
    try {
      await client.modelDelete(row.modelId)
      setNotice(`Deleted ${row.modelId}.`)
      await load()
    } catch (e) {
      setError({ error: e, context: `Delete ${row.modelId}` })
    } finally {
      setBusyId(null)
      setConfirming(null)
    }
  }

  return html`<main class="models" id="main">
    <h1 tabindex="-1">Models</h1>
    <div class="stack">
      <${UploadModel} client=${client} account=${account} initialModelId=${uploadModelId}
        onUploaded=${(row: ModelRow) => { setNotice(`Uploaded ${row.modelId}.`); load() }} />
      <section class="panel stack" aria-labelledby="model-list-heading">
        <h2 id="model-list-heading">Models on the device${rows ? html` <span class="badge">${rows.length}</span>` : null}</h2>
        <${ErrorPanel} error=${listError} context="Model list" />
        ${notice ? html`<p class="notice" role="status" data-testid="models-notice">${notice}</p>` : null}
        <${ErrorPanel} ...${error} />
        ${rows ? html`<div class="table-wrap"><table class="cards" data-testid="models">
          <caption class="sr-only">Models on the device</caption>
          <thead><tr><th scope="col">Id</th><th scope="col">Name</th><th scope="col">Source</th><th scope="col">Format</th><th scope="col">Size</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
          <tbody>${rows.map((m) => html`<tr key=${m.modelId} data-model-id=${m.modelId}>
            <th scope="row" data-label="Id"><code class="wrap">${m.modelId}</code></th>
            <td data-label="Name" class="wrap">${m.modelName}</td>
            <td data-label="Source">${m.source === 'preset' ? 'Shipped' : 'Uploaded'}</td>
            <td data-label="Format">${m.format ?? '-'}</td>
            <td data-label="Size">${m.sizeBytes === undefined ? '-' : formatBytes(m.sizeBytes, true)}</td>
            <td>${m.source === 'user' ? html`<div class="actions">
              <button type="button" class="secondary" aria-disabled=${busyId !== null} aria-label=${`Export ${m.modelId}`} onClick=${() => exportOne(m)}>Export</button>
              <button type="button" class="danger-outline" aria-disabled=${busyId !== null} aria-label=${`Delete ${m.modelId}`} onClick=${() => { if (!busyId) { setError(null); setNotice(null); setConfirming(m) } }}>Delete</button>
            </div>` : html`<span class="hint">read-only</span>`}</td>
          </tr>`)}</tbody>
        </table></div>` : null}
      </section>
    </div>
    ${confirming ? html`<${ConfirmDialog} title=${`Delete ${confirming.modelId}?`} confirmLabel="Delete" busy=${busyId === confirming.modelId}
      onConfirm=${deleteConfirmed} onCancel=${() => setConfirming(null)}>
      <p><strong>${confirming.modelName}</strong> is removed from the device. Algorithms that name it cannot create tasks until it is uploaded again.</p>
    </${ConfirmDialog}>` : null}
  </main>`
}

function UploadModel({ client, account, initialModelId, onUploaded }: { client: DeviceClient; account: string; initialModelId: string | null; onUploaded: (row: ModelRow) => void }) {
  const [file, setFile] = useState<File | null>(null)
  const [modelId, setModelId] = useState(initialModelId ?? '')
  const [modelName, setModelName] = useState('')
  const [progress, setProgress] = useState<UploadProgress | null>(null)
  const { busy, failure: error, setFailure: setError, run } = useSteps<'upload' | 'register'>()
  useEffect(() => { if (initialModelId) setModelId(initialModelId) }, [initialModelId])

  const submit = (event: Event) => {
    event.preventDefault()
    if (!file) return
    setProgress(null)
    void run(async (enter, signal) => {
      enter('upload', 'Upload')
      const uploadId = await uploadBrowserFile(client, account, file, 'model', { onProgress: setProgress, signal })
      enter('register', 'Register')
      const row = await client.modelUpload({ uploadId, ...(modelId ? { modelId } : {}), ...(modelName ? { modelName } : {}) }, { signal })
      onUploaded(row)
      setFile(null)
    })
  }

  const percent = progress ? Math.round((progress.sentBytes / Math.max(1, progress.totalBytes)) * 100) : 0
  return html`<form class="panel stack install" onSubmit=${submit} aria-busy=${busy} aria-labelledby="model-upload-heading">
    <h2 id="model-upload-heading">Upload a model</h2>
    ${initialModelId ? html`<p class="notice" data-testid="model-upload-hint">An algorithm needs the model <code>${initialModelId}</code>: choose its ONNX file.</p>` : null}
    <label class="drop">
      <input type="file" class="sr-only" accept=".onnx,application/octet-stream" disabled=${busy} data-testid="model-file"
        onChange=${(e: Event) => { setFile((e.target as HTMLInputElement).files?.[0] ?? null); setError(null) }} />
      <span>${file ? html`<strong>${file.name}</strong> · ${formatBytes(file.size, true)}` : 'Choose a model file (ONNX)'}</span>
    </label>
    <label>Model id (optional: the id a pipeline names)
      <input name="modelId" value=${modelId} disabled=${busy} pattern="[A-Za-z0-9][A-Za-z0-9._\\-]{0,63}" data-testid="model-id"
        onInput=${(e: Event) => setModelId((e.target as HTMLInputElement).value.trim())} />
    </label>
    <label>Name (optional)
      <input name="modelName" value=${modelName} disabled=${busy} maxLength=${128} onInput=${(e: Event) => setModelName((e.target as HTMLInputElement).value)} />
    </label>
    <div class="row"><button type="submit" disabled=${busy || !file} data-testid="model-upload">Upload</button></div>
    ${progress ? html`<div class="progress">
      <progress max="100" value=${percent} aria-label="Upload progress"></progress>
      <span>${percent}% · ${formatBytes(progress.sentBytes, true)} of ${formatBytes(progress.totalBytes, true)}</span>
    </div>` : null}
    <${ErrorPanel} ...${error} />
  </form>`
}
