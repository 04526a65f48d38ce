import { html } from 'htm/preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { DeviceClient } from '../../client/client.ts'
import { DeviceError, isAbort } from '../../client/errors.ts'
import { cancelStoredUpload, uploadFile, type UploadProgress } from '../../client/upload.ts'
import type { AlgorithmRow, DetectionResult, UploadCapabilities } from '../../client/types.ts'
import { ErrorPanel } from '../components/ErrorPanel.ts'
import type { ConsoleTasks } from '../console-tasks.ts'
import { formatBytes, formatCount } from '../messages.ts'
import { browserResumeStore, fileSource, resumeKeyOf } from '../session.ts'
import { Result } from './Result.ts'

/** What the detection page keeps across a sign-out (owned by the app). */
export interface DetectMemory {
  file: File | null
  algorithmCode: string | null
  /** A 401 interrupted an upload: it restarts as a new upload session (spec 5.3). */
  interrupted: boolean
  /** Sessions of uploads interrupted by a 401, cancelled once signed in again (spec 4.6: releases the reservation). */
  staleUploadIds: string[]
}

// spec 4.5: the console accepts JPEG, PNG and BMP; the device decoder has the last word.
const ACCEPT = 'image/jpeg,image/png,image/bmp,.jpg,.jpeg,.png,.bmp'
const isAcceptedImage = (file: File) => /^image\/(jpeg|png|bmp|x-ms-bmp)$/.test(file.type) || /\.(jpe?g|png|bmp)$/i.test(file.name)

/** The algorithm the page starts on: a general detector first (docs/console-and-cli.md "Detection"), else the first listed. */
const PREFERRED = ['object-detection', 'person-detector']
const firstDetector = (rows: AlgorithmRow[]) => PREFERRED.map((id) => rows.find((a) => a.algorithmId === id)).find(Boolean) ??
  rows.find((a) => /detect/i.test(`${a.algorithmId} ${a.algorithmName}`)) ?? rows[0]!

const CAPABILITY_REFRESH_MS = 15_000
const UPLOAD_RETRIES = 8

type Step = 'idle' | 'task' | 'upload' | 'detect'
const STEP_TEXT: Record<Step, string> = { idle: '', task: 'Creating the task (loading the model)…', upload: 'Uploading…', detect: 'Detecting…' }

/**
 * A limit the console checks against the live capabilities before sending anything, shown like
 * the device's own error, with the image's dimensions when the browser can read them.
 */
async function tooLargeLocally(file: File, limit: number) {
  const size = await createImageBitmap(file).then((b) => { const s = { width: b.width, height: b.height }; b.close(); return s }, () => null)
  return new DeviceError('uploadCapabilities', 0, [{
    msgCode: 'IMAGE_INPUT_TOO_LARGE', messageKey: 'api.error.imageInputTooLarge', msgText: 'The encoded image exceeds the input limit.',
    details: { actualBytes: file.size, limitBytes: limit, ...size, resource: 'encoded-image', purpose: 'image' }, retryable: false, recommendedAction: 'RESIZE_OR_RECOMPRESS_IMAGE',
  }])
}

export function Detect({ client, account, memory, tasks }: { client: DeviceClient; account: string; memory: DetectMemory; tasks: ConsoleTasks }) {
  const [algorithms, setAlgorithms] = useState<AlgorithmRow[] | null>(null)
  const [algorithmError, setAlgorithmError] = useState<unknown>(null)
  const [algorithmCode, setAlgorithmCode] = useState<string>(memory.algorithmCode ?? '')
  const [capabilities, setCapabilities] = useState<UploadCapabilities | null>(null)
  const [capabilityError, setCapabilityError] = useState<unknown>(null)
  const [file, setFile] = useState<File | null>(memory.file)
  const [dragging, setDragging] = useState(false)
  const [step, setStep] = useState<Step>('idle')
  const [progress, setProgress] = useState<UploadProgress | null>(null)
  const [retrying, setRetrying] = useState<number | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [errorContext, setErrorContext] = useState<string | undefined>(undefined)
  const [result, setResult] = useState<DetectionResult | null>(null)
  const [timings, setTimings] = useState<Record<string, number> | null>(null)
  const [notice, setNotice] = useState<string | null>(memory.interrupted ? 'The previous upload was interrupted when the session ended; it starts again as a new upload.' : null)
  const abort = useRef<AbortController | null>(null)
  const resultPanel = useRef<HTMLDivElement>(null)

  // On a narrow screen the result is laid out below the form: bring it into view.
  useEffect(() => {
    const panel = resultPanel.current
    if (!result || !panel) return
    if (panel.getBoundingClientRect().top > innerHeight * 0.6) panel.scrollIntoView({ block: 'start', behavior: 'smooth' })
  }, [result])

  useEffect(() => {
    memory.interrupted = false
    for (const uploadId of memory.staleUploadIds.splice(0)) client.cancelUpload(uploadId).catch(() => undefined)
    client.algorithmPage({ algorithmUsage: '2' }).then((page) => {
      setAlgorithms(page.rows)
      if (!algorithmCode && page.rows[0]) setAlgorithmCode(firstDetector(page.rows).algorithmId)
    }, setAlgorithmError)
  }, [])

  // spec 2.5: capabilities are live; never hard-code a previously observed value.
  const refreshCapabilities = () => client.polling.uploadCapabilities().then((c) => { setCapabilities(c); setCapabilityError(null) }, setCapabilityError)
  useEffect(() => {
    refreshCapabilities()
    const timer = setInterval(refreshCapabilities, CAPABILITY_REFRESH_MS)
    return () => { clearInterval(timer); abort.current?.abort() }
  }, [])

  useEffect(() => { memory.algorithmCode = algorithmCode || null }, [algorithmCode])

  const choose = (chosen: File | null | undefined) => {
    if (!chosen) return
    setResult(null)
    setNotice(null)
    if (!isAcceptedImage(chosen)) {
      // The refused file replaces the previous choice: nothing is selected, Detect waits for an image.
      setFile(null)
      memory.file = null
      setError(new Error(`${chosen.name} is not a JPEG, PNG or BMP image.`))
      setErrorContext('File')
      return
    }
    setError(null)
    setFile(chosen)
    memory.file = chosen
  }

  const ensureTask = async (code: string, fresh = false) => {
    setStep('task')
    return tasks.ensure(code, fresh)
  }

  const run = async (event: Event) => {
    event.preventDefault()
    if (!file || !algorithmCode) return
    setError(null)
    setResult(null)
    setTimings(null)
    setNotice(null)
    setProgress(null)
    const limit = Number(capabilities?.maxEncodedImageBytes ?? 0)
    if (limit > 0 && file.size > limit) {
      setErrorContext('Checked against the device’s live upload capabilities')
      setError(await tooLargeLocally(file, limit))
      return
    }
    const controller = new AbortController()
    abort.current = controller
    let context = 'Task'
    let uploadId: string | null = null
    try {
      let taskId = await ensureTask(algorithmCode)
      context = 'Upload'
      setStep('upload')
      const upload = await uploadFile(client, fileSource(file), {
        purpose: 'image', resumeKey: resumeKeyOf(account, file), store: browserResumeStore, capabilities: capabilities ?? undefined,
        retries: UPLOAD_RETRIES, retryDelayMs: (attempt) => Math.min(5000, 250 * 2 ** (attempt - 1)),
        onProgress: (p) => { setProgress(p); setRetrying(null) },
        onRetry: (attempt) => setRetrying(attempt),
        signal: controller.signal,
      })
      uploadId = upload.uploadId
      context = 'Detection'
      setStep('detect')
      let detection: DetectionResult
      try {
        detection = await client.detectPic({ taskId, algorithmCode, uploadId: upload.uploadId }, { signal: controller.signal })
      } catch (e) {
        // spec 7.1: NotCreated → create the task again with matching values (e.g. after a device restart).
        if (!(e instanceof DeviceError) || e.messageKey !== 'api.error.NotCreated') throw e
        taskId = await ensureTask(algorithmCode, true)
        setStep('detect')
        detection = await client.detectPic({ taskId, algorithmCode, uploadId: upload.uploadId }, { signal: controller.signal })
      }
      setResult(detection)
      // The stage times of this detection (the task's last one), for the result's inference time.
      client.taskInfo(taskId).then((info) => setTimings(info.lastTimings), () => setTimings(null))
    } catch (e) {
      if (!isAbort(e)) {
        setErrorContext(context)
        setError(e)
      }
      // spec 4.6, 4.7: a failed detection leaves its upload for a retry; the console starts afresh, so it releases it.
      if (uploadId) client.cancelUpload(uploadId).catch(() => undefined)
    } finally {
      tasks.idle()
      setStep('idle')
      setRetrying(null)
      abort.current = null
      refreshCapabilities()
    }
  }

  const cancel = async () => {
    abort.current?.abort()
    if (file) await cancelStoredUpload(client, browserResumeStore, resumeKeyOf(account, file)).catch((e) => { setErrorContext('Cancel'); setError(e) })
    setProgress(null)
    setNotice('Upload cancelled.')
  }

  const busy = step !== 'idle'
  // A select cannot wrap: the chosen algorithm's full name and id are repeated below it.
  const picked = algorithms?.find((a) => a.algorithmId === algorithmCode)
  const percent = progress ? Math.round((progress.sentBytes / Math.max(1, progress.totalBytes)) * 100) : 0
  return html`<main class="detect" id="main">
    <h1 tabindex="-1">Detection</h1>
    <div class="columns">
      <form class="panel stack" onSubmit=${run} aria-busy=${busy}>
        <label>Algorithm
          <select name="algorithm" value=${algorithmCode} disabled=${busy || !algorithms?.length} onChange=${(e: Event) => setAlgorithmCode((e.target as HTMLSelectElement).value)} data-testid="algorithm">
            ${algorithms === null && !algorithmError ? html`<option value="">Loading…</option>` : null}
            ${algorithms?.length === 0 ? html`<option value="">No image-analysis algorithm on this device</option>` : null}
            ${(algorithms ?? []).map((a) => html`<option value=${a.algorithmId}>${a.algorithmName || a.algorithmId}</option>`)}
          </select>
        </label>
        ${picked ? html`<p class="hint picked"><span data-testid="algorithm-name">${picked.algorithmName || picked.algorithmId}</span> · id <code>${picked.algorithmId}</code></p>` : null}
        <${ErrorPanel} error=${algorithmError} context="Algorithms" />

        <label class=${`drop${dragging ? ' dragging' : ''}`}
          onDragOver=${(e: DragEvent) => { e.preventDefault(); setDragging(true) }}
          onDragLeave=${() => setDragging(false)}
          onDrop=${(e: DragEvent) => { e.preventDefault(); setDragging(false); choose(e.dataTransfer?.files?.[0]) }}>
          <input type="file" class="sr-only" accept=${ACCEPT} disabled=${busy} data-testid="file"
            onChange=${(e: Event) => { const input = e.target as HTMLInputElement; const chosen = input.files?.[0]; if (chosen && !isAcceptedImage(chosen)) input.value = ''; choose(chosen) }} />
          <span class="drop-text">${file ? html`<strong data-testid="file-name">${file.name}</strong> · ${formatBytes(file.size)}` : 'Choose or drop an image (JPEG, PNG, BMP)'}</span>
        </label>

        <div class="row">
          <button type="submit" disabled=${busy || !file || !algorithmCode} data-testid="detect">Detect</button>
          ${step === 'upload' ? html`<button type="button" class="secondary" onClick=${cancel}>Cancel upload</button>` : null}
        </div>

        ${busy ? html`<p role="status" data-testid="step">${STEP_TEXT[step]}${retrying ? ` Interrupted — resuming (attempt ${retrying} of ${UPLOAD_RETRIES})…` : ''}</p>` : null}
        ${progress ? html`<div class="progress">
          <progress max="100" value=${percent} aria-label="Upload progress" data-testid="progress"></progress>
          <span data-testid="progress-text">${percent}% · ${formatBytes(progress.sentBytes, true)} of ${formatBytes(progress.totalBytes, true)}</span>
        </div>` : null}
        ${notice ? html`<p class="notice" role="status" data-testid="notice">${notice}</p>` : null}
        <${ErrorPanel} error=${error} context=${errorContext} />

        <${Capabilities} capabilities=${capabilities} error=${capabilityError} />
      </form>
      <div class="panel result-panel" ref=${resultPanel}>
        ${result ? html`<${Result} client=${client} result=${result} timings=${timings} picture=${file} account=${account} />` : html`<p class="placeholder">The result appears here.</p>`}
      </div>
    </div>
  </main>`
}

/** The live upload capabilities (spec 2.5). */
function Capabilities({ capabilities, error }: { capabilities: UploadCapabilities | null; error: unknown }) {
  if (error) return html`<${ErrorPanel} error=${error} context="Upload capabilities" />`
  if (!capabilities) return html`<p class="hint">Reading upload capabilities…</p>`
  const rows: [string, string][] = [
    ['Largest image file', formatBytes(capabilities.maxEncodedImageBytes)],
    ['Largest image', `${formatCount(capabilities.maxImagePixels)} pixels`],
    ['Chunk size limit', formatBytes(capabilities.maxChunkSize)],
    ['Free for new uploads', formatBytes(capabilities.availableForNewUploadsBytes)],
    ['Disk safety reserve', formatBytes(capabilities.reserveBytes)],
    ['Open upload sessions', String(capabilities.activeSessions)],
    ['Resumable', capabilities.resumable ? `yes${capabilities.persistentAcrossRestart ? ', across restarts' : ''}` : 'no'],
  ]
  return html`<details class="caps" open>
    <summary>Upload capabilities (live)</summary>
    <dl data-testid="capabilities">${rows.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>
  </details>`
}
