import type { Readable } from 'node:stream'
import type { Identity } from '../handler.ts'

/**
 * The upload service (`ctx.uploads`): the chunked `uploadTemp` protocol of spec 4.5/4.12
 * and the session state machine of spec 3.1, over a tus DataStore. Constructed once by the
 * runtime (`runtime/services.ts`); implementation in `runtime/uploads/`.
 */
export interface UploadService {
  /** Live `uploadCapabilities` (spec 2.5, 4.4). */
  capabilities(): Promise<UploadCapabilities>
  /**
   * One `uploadTemp` request (spec 4.5). Chunk 0 without `uploadId` opens a session after
   * admission, or resumes the caller's open/complete session with the same `clientRequestId`
   * and file parameters (spec 4.12). Other chunks need `uploadId` and
   * `chunkIndex == nextChunkIndex`; an already accepted chunk is acknowledged without being
   * written again. `body` is the chunk's bytes; it is streamed to the store, never buffered.
   * On any error the session (manifest and stored bytes) is left exactly as it was.
   */
  putChunk(identity: Identity, chunk: ChunkFields, body: Readable): Promise<UploadSessionView>
  /**
   * One `uploadTemp` HTTP request as it arrives: its multipart body is streamed into `putChunk`
   * (fields and file part in either order, the chunk within maxChunkSize; runtime/uploads/multipart.ts).
   */
  receiveChunk(identity: Identity, request: Request): Promise<UploadSessionView>
  /** `cancelUpload` (spec 4.6): releases the reservation at once and deletes the bytes. */
  cancel(identity: Identity, uploadId: string): Promise<void>
  /**
   * Consumes a complete upload (spec 3.1 "complete → consumed"). Succeeds once, only for the
   * identity that created the session (another user gets UPLOAD_NOT_FOUND, as for an unknown
   * id) and only for the same `purpose` (else UPLOAD_PURPOSE_MISMATCH, session untouched).
   * Errors: UPLOAD_NOT_FOUND, UPLOAD_NOT_COMPLETE, UPLOAD_CONSUMED, UPLOAD_CANCELLED,
   * UPLOAD_EXPIRED, UPLOAD_FAILED, UPLOAD_PURPOSE_MISMATCH.
   *
   * The returned file stays on disk until `release()` is called (call it when done reading,
   * e.g. in a `finally`); the sweeper deletes forgotten consumed files after the idle timeout,
   * unless `keepUntilRelease` is set: a consumer that reads the file for longer than that (a
   * fleet push, docs/deployment.md "Fleet view") keeps it until its `release()` (or the end of
   * the process: a file left then is swept after the next start).
   */
  claim(uploadId: string, identity: Identity, purpose: string, options?: { keepUntilRelease?: boolean }): Promise<ClaimedUpload>
  /**
   * `claim` for a consumer that may fail (spec 4.7: a *successful* claim consumes the upload):
   * same checks and errors as `claim`, and the session is taken at once (a concurrent claim or
   * lease gets UPLOAD_CONSUMED, so only one consumer ever holds it). `commit()` keeps it
   * consumed and deletes the bytes; `abandon()` puts it back to `complete` with its bytes, so
   * the client can retry with the same `uploadId`. Settles once; later calls do nothing.
   * Until it settles, the file is held like a `keepUntilRelease` claim: the sweeper leaves it
   * alone however long the consumer works on it.
   */
  lease(uploadId: string, identity: Identity, purpose: string): Promise<UploadLease>
  /** Expires idle sessions and deletes bytes of released ones; the runtime calls it on a timer. */
  sweep(): Promise<SweepResult>
  /** Stops the sweeper timer (runtime shutdown). */
  close(): Promise<void>
}

/** Parts of one `uploadTemp` request (spec 4.5), already parsed to numbers. */
export interface ChunkFields {
  /** Original filename of the file part: metadata only, never used as a path. */
  filename: string
  purpose: string
  chunkIndex: number
  totalChunks: number
  totalSize: number
  chunkSize: number
  clientRequestId?: string
  uploadId?: string
  /** Lower-case hex sha256 of the whole file. */
  sha256?: string
}

/** `resData` of `uploadTemp` (spec 2.5 "Upload session"). */
export interface UploadSessionView {
  uploadId: string
  /** Decimal string (spec 2.5). */
  nextChunkIndex: string
  complete: boolean
  /** Compatibility alias, not a filesystem path (spec 2.5). */
  filePath: string
}

/** `resData` of `uploadCapabilities` (spec 2.5); byte counts are decimal strings (spec 8). */
export interface UploadCapabilities {
  maxTotalSize: string
  maxChunkSize: string
  maxChunks: number
  availableBytes: string
  reserveBytes: string
  availableForNewUploadsBytes: string
  reservedBySessionsBytes: string
  activeSessions: number
  idleTimeoutMs: number
  absoluteTimeoutMs: number
  resumable: boolean
  persistentAcrossRestart: boolean
  maxEncodedImageBytes: string
  maxImagePixels: number
}

export interface ClaimedUpload {
  uploadId: string
  /** Absolute path of the staged file (inside `<DATA_DIR>/uploads`, named by the server). */
  path: string
  /** The client's original filename, as sent (may contain anything; never a path). */
  originalFilename: string
  size: number
  purpose: string
  sha256: string | null
  /** Deletes the staged bytes. Idempotent. */
  release(): Promise<void>
}

export interface UploadLease extends Omit<ClaimedUpload, 'release'> {
  commit(): Promise<void>
  abandon(): Promise<void>
}

export interface SweepResult {
  expired: number
  deletedFiles: number
}

export type UploadState = 'open' | 'complete' | 'consumed' | 'cancelled' | 'expired' | 'failed'
