import { html } from 'htm/preact'
import { useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { UploadProgress } from '../../client/upload.ts'
import { ErrorPanel } from '../components/ErrorPanel.ts'
import { formatBytes } from '../messages.ts'
import { useSteps } from '../steps.ts'
import { UPLOAD_RETRIES, uploadBrowserFile } from '../upload.ts'

// Packages as exportSingleAlg (zip) and export (tar.gz) write them; the device checks the content.
const ACCEPT = '.zip,.tar.gz,.tgz,application/zip,application/gzip'

/**
 * Installs an algorithm package (spec 4.10 Algorithm/upload): a resumable chunked upload of
 * purpose `algorithm` (spec 4.5, 4.12), then the install of that upload. The device checks the
 * whole package before installing anything; its refusal is shown as it comes.
 */
export function InstallPackage({ client, account, onInstalled }: { client: DeviceClient; account: string; onInstalled: () => void }) {
  const [file, setFile] = useState<File | null>(null)
  const [replace, setReplace] = useState(false)
  const [progress, setProgress] = useState<UploadProgress | null>(null)
  const [retrying, setRetrying] = useState<number | null>(null)
  const [installed, setInstalled] = useState<string[] | null>(null)
  const { step, busy, failure: error, setFailure: setError, run } = useSteps<'upload' | 'install'>()

  const install = (event: Event) => {
    event.preventDefault()
    if (!file) return
    setInstalled(null)
    setProgress(null)
    void run(async (enter, signal) => {
      enter('upload', 'Upload')
      const uploadId = await uploadBrowserFile(client, account, file, 'algorithm', {
        onProgress: (p) => { setProgress(p); setRetrying(null) },
        onRetry: (attempt) => setRetrying(attempt),
        signal,
      })
      enter('install', 'Install')
      const result = await client.algorithmUpload({ uploadId, replace }, { signal })
      setInstalled(result.algorithms.map((a) => a.algorithmId))
      onInstalled()
    }).finally(() => setRetrying(null))
  }

  const percent = progress ? Math.round((progress.sentBytes / Math.max(1, progress.totalBytes)) * 100) : 0
  return html`<form class="panel stack install" onSubmit=${install} aria-busy=${busy} aria-labelledby="install-heading">
    <h2 id="install-heading">Install package</h2>
    <label class="drop">
      <input type="file" class="sr-only" accept=${ACCEPT} disabled=${busy} data-testid="package-file"
        onChange=${(e: Event) => { setFile((e.target as HTMLInputElement).files?.[0] ?? null); setError(null); setInstalled(null) }} />
      <span>${file ? html`<strong data-testid="package-name">${file.name}</strong> · ${formatBytes(file.size)}` : 'Choose an algorithm package (.zip or .tar.gz)'}</span>
    </label>
    <label class="check"><input type="checkbox" checked=${replace} disabled=${busy} data-testid="replace"
      onChange=${(e: Event) => setReplace((e.target as HTMLInputElement).checked)} /> Replace existing algorithms with the same id</label>
    <div class="row"><button type="submit" disabled=${busy || !file} data-testid="install">Install</button></div>
    ${busy ? html`<p role="status" data-testid="install-step">${step === 'upload' ? 'Uploading…' : 'Checking and installing the package…'}${retrying ? ` Interrupted — resuming (attempt ${retrying} of ${UPLOAD_RETRIES})…` : ''}</p>` : null}
    ${progress ? html`<div class="progress">
      <progress max="100" value=${percent} aria-label="Upload progress" data-testid="install-progress"></progress>
      <span>${percent}% · chunk ${Math.min(progress.nextChunkIndex, progress.totalChunks)} of ${progress.totalChunks}</span>
    </div>` : null}
    ${installed ? html`<p class="notice" role="status">Installed: <span data-testid="installed">${installed.join(', ')}</span></p>` : null}
    <${ErrorPanel} ...${error} />
  </form>`
}
