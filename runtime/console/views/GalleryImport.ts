import { html } from 'htm/preact'
import { useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import { DeviceError } from '../../client/errors.ts'
import { importStatus, startImport, type Gallery, type ImportJob } from '../../client/galleries.ts'
import type { UploadProgress } from '../../client/upload.ts'
import { ErrorPanel } from '../components/ErrorPanel.ts'
import { formatBytes } from '../messages.ts'
import { useSteps } from '../steps.ts'
import { uploadBrowserFile } from '../upload.ts'

const ACCEPT = '.zip,.tar.gz,.tgz,application/zip,application/gzip'
const POLL_MS = 500

/** Row failure reasons (docs/galleries.md "File import") in words. */
const REASON: Record<string, string> = {
  'missing-file': 'file not in the archive',
  'no-face': 'no face found',
  'several-faces': 'several faces found',
  'duplicate-id': 'person id already in this manifest',
  'invalid-row': 'invalid row',
  'bad-image': 'not a readable image',
  'poor-face': 'face too small, blurred or turned away (see detail)',
}

/**
 * Imports persons into the open face gallery from an archive (spec 4.10 File import): the
 * archive is uploaded with purpose `face-import`, the job started, and its progress, counts
 * and per-row errors shown until it ends.
 */
export function GalleryImport({ client, account, gallery, onDone }: { client: DeviceClient; account: string; gallery: Gallery; onDone: () => void }) {
  const [file, setFile] = useState<File | null>(null)
  const [upload, setUpload] = useState<UploadProgress | null>(null)
  const [job, setJob] = useState<ImportJob | null>(null)
  const { step, busy, failure: error, setFailure: setError, run } = useSteps<'upload' | 'import'>()

  const submit = (event: Event) => {
    event.preventDefault()
    if (!file) return
    setJob(null)
    setUpload(null)
    void run(async (enter, signal) => {
      enter('upload', 'Upload')
      const uploadId = await uploadBrowserFile(client, account, file, 'face-import', { onProgress: setUpload, signal })
      enter('import', 'Import')
      const { jobId } = await startImport(client, gallery.galleryId, uploadId)
      for (;;) {
        const status = await importStatus(client, jobId)
        setJob(status)
        if (status.state !== 'running') break
        await new Promise((resolve) => setTimeout(resolve, POLL_MS))
        if (signal.aborted) return
      }
      onDone()
    })
  }

  const uploaded = upload ? Math.round((upload.sentBytes / Math.max(1, upload.totalBytes)) * 100) : 0
  // The job's own failure (archive or manifest refused) is a message item of spec 2.7.
  const jobError = job?.error ? new DeviceError('/gtw/cwai/File/ImportStatus', 200, [job.error as never], null) : null
  return html`<form class="panel stack" onSubmit=${submit} aria-busy=${busy} aria-labelledby="import-heading">
    <h2 id="import-heading">Import persons into ${gallery.name}</h2>
    <p class="hint">A zip or tar.gz with the face images and a <code>manifest.csv</code> (columns personId, name, file) or <code>manifest.json</code> at its root.</p>
    <label class="drop">
      <input type="file" class="sr-only" accept=${ACCEPT} disabled=${busy} data-testid="import-file"
        onChange=${(e: Event) => { setFile((e.target as HTMLInputElement).files?.[0] ?? null); setJob(null); setError(null) }} />
      <span>${file ? html`<strong>${file.name}</strong> · ${formatBytes(file.size)}` : 'Choose an archive (.zip or .tar.gz)'}</span>
    </label>
    <div class="row"><button type="submit" disabled=${busy || !file} data-testid="import">Import</button></div>
    ${step === 'upload' ? html`<div class="progress">
      <progress max="100" value=${uploaded} aria-label="Upload progress"></progress><span>Uploading: ${uploaded}%</span>
    </div>` : null}
    ${job ? html`<div class="stack" data-testid="import-job" data-state=${job.state}>
      <div class="progress">
        <progress max=${Math.max(1, job.total)} value=${job.processed} aria-label="Import progress" data-testid="import-progress"></progress>
        <span role="status">${job.state === 'running' ? 'Importing' : job.state === 'done' ? 'Done' : 'Failed'}: ${job.processed} of ${job.total} rows</span>
      </div>
      <p data-testid="import-counts">${job.imported} imported · ${job.skipped} already there · ${job.failed} failed</p>
      ${job.errors.length ? html`<table data-testid="import-errors">
        <caption>Rows not imported</caption>
        <thead><tr><th scope="col">Row</th><th scope="col">Person id</th><th scope="col">File</th><th scope="col">Reason</th></tr></thead>
        <tbody>${job.errors.map((row) => html`<tr data-row=${row.row}>
          <td>${row.row}</td><td><code>${row.personId}</code></td><td><code class="wrap">${row.file}</code></td>
          <td data-reason=${row.reason}>${REASON[row.reason] ?? row.reason}${row.faces !== undefined ? ` (${row.faces})` : ''}${row.detail ? `: ${row.detail}` : ''}</td>
        </tr>`)}</tbody>
      </table>` : null}
      <${ErrorPanel} error=${jobError} context="Import" />
    </div>` : null}
    <${ErrorPanel} ...${error} />
  </form>`
}
