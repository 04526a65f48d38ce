import { DeviceClient, uuid } from './client.ts'
import { DeviceError, NetworkError } from './errors.ts'
import type { UploadCapabilities, UploadSession } from './types.ts'

/** The file to upload: a browser `File`/`Blob`, or a Node file (see node.ts). */
export interface UploadSource {
  name: string
  size: number
  /** Bytes [start, end) as a Blob. */
  slice(start: number, end: number): Promise<Blob> | Blob
}

/**
 * The local resume identity of an upload (spec 4.12): kept until the upload completes or is
 * cancelled, so that an upload interrupted by a disconnect or a device restart continues.
 */
export interface ResumeRecord {
  clientRequestId: string
  uploadId: string | null
  fileName: string
  size: number
  purpose: string
  chunkSize: number
  totalChunks: number
  createdAt: string
}

export interface ResumeStore {
  load(key: string): Promise<ResumeRecord | null>
  save(key: string, record: ResumeRecord): Promise<void>
  remove(key: string): Promise<void>
}

export interface UploadProgress {
  sentBytes: number
  totalBytes: number
  nextChunkIndex: number
  totalChunks: number
  uploadId: string | null
}

export interface UploadOptions {
  purpose?: string
  /** Identifies this file in the resume store (e.g. path + size + mtime). */
  resumeKey: string
  store: ResumeStore
  /** Wanted chunk size; bounded by the live `maxChunkSize` (spec 4.5, 8). Default 8 MB. */
  chunkSize?: number
  /** Live capabilities when the caller already has them (they must not be hard-coded, spec 2.5). */
  capabilities?: UploadCapabilities
  /** How many times a broken connection (or a retryable refusal with retryAfterSeconds) is resumed before giving up (default 0). */
  retries?: number
  /** Delay before resume attempt n (1-based). */
  retryDelayMs?: (attempt: number) => number
  onProgress?: (progress: UploadProgress) => void
  /** Told before each resume after a network error or a retryable refusal. */
  onRetry?: (attempt: number, error: NetworkError | DeviceError) => void
  signal?: AbortSignal
}

export interface UploadOutcome {
  uploadId: string
  totalChunks: number
  /** The chunk index the device asked for when this run started (0 for a fresh upload). */
  resumedFromChunk: number
  /** Whether a resume identity from an earlier run was used. */
  resumed: boolean
}

export const DEFAULT_CHUNK_SIZE = 8 * 1024 * 1024

const sleep = (ms: number, signal?: AbortSignal) => new Promise<void>((resolve, reject) => {
  const timer = setTimeout(resolve, ms)
  signal?.addEventListener('abort', () => { clearTimeout(timer); reject(signal.reason) }, { once: true })
})

/**
 * Uploads a file through `uploadTemp` in chunks (spec 4.5, 4.12):
 * chunk 0 always carries the stable `clientRequestId`; after a disconnect or a device restart
 * chunk 0 is resent with the same id and the device answers its `nextChunkIndex`, from which
 * the upload continues. The resume identity is deleted once the upload is complete; it stays
 * on failure so that a later run resumes (or `cancelStoredUpload` releases it).
 */
export async function uploadFile(client: DeviceClient, source: UploadSource, options: UploadOptions): Promise<UploadOutcome> {
  const purpose = options.purpose ?? 'image'
  const capabilities = options.capabilities ?? await client.uploadCapabilities({ signal: options.signal })
  const maxChunk = Number(capabilities.maxChunkSize) || DEFAULT_CHUNK_SIZE
  const wanted = Math.max(1, Math.min(options.chunkSize ?? DEFAULT_CHUNK_SIZE, maxChunk))

  const fresh = (): ResumeRecord => {
    // spec 4.5: a file that fits in maxChunkSize goes in one request.
    const chunkSize = source.size <= maxChunk && options.chunkSize === undefined ? Math.max(source.size, 1) : wanted
    return {
      clientRequestId: uuid(), uploadId: null, fileName: source.name, size: source.size, purpose,
      chunkSize, totalChunks: Math.max(1, Math.ceil(source.size / chunkSize)), createdAt: new Date().toISOString(),
    }
  }
  const stored = await options.store.load(options.resumeKey)
  let resumed = !!stored && stored.size === source.size && stored.purpose === purpose && stored.fileName === source.name && stored.chunkSize <= maxChunk
  let r = resumed ? stored! : fresh()
  if (!resumed) await options.store.save(options.resumeKey, r)
  const progress = (nextChunkIndex: number, uploadId: string | null) => options.onProgress?.({
    sentBytes: Math.min(source.size, nextChunkIndex * r.chunkSize), totalBytes: source.size, nextChunkIndex, totalChunks: r.totalChunks, uploadId,
  })

  const sendChunk = async (index: number, uploadId: string | null): Promise<UploadSession> => {
    const start = index * r.chunkSize
    const end = Math.min(source.size, start + r.chunkSize)
    const blob = await source.slice(start, end)
    // Bytes as they leave (where the client can tell): the multipart body is the chunk plus a
    // small overhead, so the share of the body sent is the share of the chunk sent.
    const onUploadProgress = options.onProgress && ((sent: number, total: number) => options.onProgress!({
      sentBytes: start + Math.floor((end - start) * Math.min(1, sent / Math.max(1, total))), totalBytes: source.size,
      nextChunkIndex: index, totalChunks: r.totalChunks, uploadId,
    }))
    return client.uploadChunk({
      purpose, chunkIndex: index, totalChunks: r.totalChunks, totalSize: source.size, chunkSize: end - start,
      clientRequestId: r.clientRequestId, ...(uploadId ? { uploadId } : {}),
    }, blob, source.name, { signal: options.signal, onUploadProgress })
  }

  let attempt = 0
  let resumedFromChunk = -1
  for (;;) {
    try {
      // Chunk 0 opens the session, or (same clientRequestId) answers the existing one (spec 3.1, 4.12).
      let session: UploadSession
      try {
        session = await sendChunk(0, null)
      } catch (error) {
        const refused = error instanceof DeviceError && !error.unauthorized && error.item?.retryable !== true
        if (refused && resumed && resumedFromChunk < 0) {
          // The device no longer knows the stored session (cancelled, expired, other identity): start afresh once.
          resumed = false
          r = fresh()
          await options.store.save(options.resumeKey, r)
          continue
        }
        // A refused first chunk of a fresh upload created no session: nothing to resume.
        if (refused && !r.uploadId) await options.store.remove(options.resumeKey)
        throw error
      }
      if (r.uploadId !== session.uploadId) {
        r.uploadId = session.uploadId
        await options.store.save(options.resumeKey, r)
      }
      if (resumedFromChunk < 0) resumedFromChunk = resumed ? Number(session.nextChunkIndex) : 0
      progress(Number(session.nextChunkIndex), session.uploadId)
      while (!session.complete) {
        const next = Number(session.nextChunkIndex)
        if (!Number.isInteger(next) || next < 1 || next >= r.totalChunks) throw new DeviceError('uploadTemp', 200, [], `unexpected nextChunkIndex ${session.nextChunkIndex}`)
        session = await sendChunk(next, session.uploadId)
        progress(Number(session.nextChunkIndex), session.uploadId)
      }
      progress(r.totalChunks, session.uploadId)
      // spec 4.12.3: after completion the local resume identity is deleted.
      await options.store.remove(options.resumeKey)
      return { uploadId: session.uploadId, totalChunks: r.totalChunks, resumedFromChunk, resumed }
    } catch (error) {
      // A broken connection, or a retryable refusal with a suggested wait (e.g. TRANSFER_BUSY while
      // the device still finishes the aborted request, spec 7.2), is resumed; anything else is final.
      const waitSeconds = error instanceof DeviceError && error.item?.retryable ? error.item.retryAfterSeconds : undefined
      const resumable = error instanceof NetworkError || waitSeconds !== undefined
      if (!resumable || attempt >= (options.retries ?? 0)) throw error
      attempt++
      options.onRetry?.(attempt, error as NetworkError | DeviceError)
      const delay = options.retryDelayMs?.(attempt) ?? Math.min(8000, 500 * 2 ** (attempt - 1))
      await sleep(Math.max(delay, (waitSeconds ?? 0) * 1000), options.signal)
    }
  }
}

/** spec 4.6, 4.12.3: cancels the stored upload (if the device knows it) and deletes the resume identity. */
export async function cancelStoredUpload(client: DeviceClient, store: ResumeStore, resumeKey: string): Promise<ResumeRecord | null> {
  const record = await store.load(resumeKey)
  if (!record) return null
  if (record.uploadId) await client.cancelUpload(record.uploadId)
  await store.remove(resumeKey)
  return record
}
