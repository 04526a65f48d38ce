import { createReadStream } from 'node:fs'
import { stat, truncate, writeFile } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { ApiError } from '../../shared/errors/index.ts'
import type { Identity } from '../../shared/handler.ts'
import type { ChunkFields, UploadSessionView } from '../../shared/uploads/index.ts'
import { ByteGate } from './byte-gate.ts'
import type { SessionWrite } from './locks.ts'
import type { UploadSessionRow } from './repository.ts'
import { checkChunkFields, checkChunkPlacement, checkResentChunk, checkSameFile, endedSessionError, metadataBytesOf } from './rules.ts'
import type { SessionCore } from './session-core.ts'
import { sha256Of } from '../digest.ts'
import { receiveChunk } from './multipart.ts'
import { spoolDirOf } from './spool.ts'

/**
 * The `uploadTemp` protocol (spec 4.5, 4.12): one adapter around the session core
 * (session-core.ts), beside the tus one (tus-sessions.ts). Chunk 0 opens or resumes a session,
 * each chunk is written under the session's write lock, and the state moves only through the
 * core's transition table (transitions.ts).
 */
export class UploadTempSessions {
  /**
   * Size of each uploadTemp session's file as this process last left it (after an accepted or
   * rolled-back chunk), so that alignFile need not stat the file before every chunk. Empty
   * after a restart: the first chunk then checks the file on disk.
   */
  private readonly knownFileSizes = new Map<string, number>()

  constructor(private readonly core: SessionCore) {}

  /** The session's file went away (removed by the core): its size is unknown again. */
  forgetFile(uploadId: string): void {
    this.knownFileSizes.delete(uploadId)
  }

  /**
   * An uploadTemp session's bytes only (inside the admission): the tus endpoint never serves
   * it, so the store's own record of an upload (a JSON file beside the bytes) would be written
   * for nothing. A session whose file cannot be made is undone.
   */
  private async createFile(uploadId: string): Promise<void> {
    try {
      await writeFile(this.core.filePath(uploadId), '', { flag: 'wx' })
      this.knownFileSizes.set(uploadId, 0)
    } catch (error) {
      await this.core.forget(uploadId)
      throw error
    }
  }

  /** One multipart request (spec 4.5, 8): the chunk enforces maxChunkSize itself while it streams. */
  receive(identity: Identity, request: Request): Promise<UploadSessionView> {
    const { config } = this.core
    return receiveChunk(request, { maxChunkBytes: config.uploadMaxChunkBytes, spoolDir: spoolDirOf(config.dataPath) },
      (fields, body) => this.putChunk(identity, fields, body))
  }

  async putChunk(identity: Identity, chunk: ChunkFields, body: Readable): Promise<UploadSessionView> {
    try {
      checkChunkFields(chunk, this.core.config)
      if (chunk.uploadId === undefined) return await this.openOrResume(identity, chunk, body)
      const { id } = await this.core.ownSession(identity, chunk.uploadId, 'uploadTemp')
      const write = this.core.locks.acquire(id)
      try {
        return await this.acceptChunk(id, chunk, body, write)
      } finally {
        write.release()
      }
    } catch (error) {
      this.core.refused('uploadTemp', error)
      throw error
    } finally {
      body.resume() // whatever happened, let the rest of the body drain
    }
  }

  /** spec 3.1 rows 1–2: chunk 0 opens a session after admission, or resumes the caller's live one (spec 4.12). */
  private async openOrResume(identity: Identity, chunk: ChunkFields, body: Readable): Promise<UploadSessionView> {
    const { session, write, created } = await this.core.admission.exclusive(async () => {
      if (chunk.clientRequestId !== undefined) {
        const existing = await this.core.repo.findLiveByRequest(identity.userId, chunk.clientRequestId)
        if (existing && existing.source === 'uploadTemp' && !(await this.core.expireIfDue(existing))) {
          checkSameFile(chunk, existing)
          return { session: existing, write: this.core.locks.acquire(existing.id), created: false }
        }
      }
      const session = await this.core.admission.admit(identity, {
        source: 'uploadTemp', filename: chunk.filename, purpose: chunk.purpose, totalSize: chunk.totalSize,
        totalChunks: chunk.totalChunks, clientRequestId: chunk.clientRequestId, sha256: chunk.sha256,
        metadataBytes: metadataBytesOf(chunk),
      })
      await this.createFile(session.id)
      return { session, write: this.core.locks.acquire(session.id), created: true }
    })
    try {
      // A session made by this request is current: its write lock was taken as it was inserted.
      return await this.acceptChunk(session.id, chunk, body, write, created ? session : undefined)
    } catch (error) {
      // A session whose first chunk failed never existed for the client: undo it entirely.
      if (created) await this.core.forget(session.id)
      throw error
    } finally {
      write.release()
    }
  }

  /** spec 3.1 rows 3–4 (and idempotent resend): one chunk of a session whose write lock is held. */
  private async acceptChunk(uploadId: string, chunk: ChunkFields, body: Readable, write: SessionWrite, created?: UploadSessionRow): Promise<UploadSessionView> {
    // Read the session only now that the lock is held: a row read before may be stale, since a
    // writer that released the lock meanwhile may have accepted this very chunk (a resend, spec
    // 4.12); acting on the stale row would truncate that committed chunk away.
    const session = created ?? await this.core.liveSession(uploadId)
    checkSameFile(chunk, session)
    const maxChunk = this.core.config.uploadMaxChunkBytes

    if (chunk.chunkIndex < session.nextChunkIndex) {
      // Already accepted: acknowledge without writing it again (spec 4.12 resend after a lost
      // answer). Spec 3.1 resumes only the same file: a resend must carry the bytes stored for
      // that chunk (the same clientRequestId and sizes do not make it the same file).
      const accepted = await this.core.repo.chunk(session.id, chunk.chunkIndex)
      checkResentChunk(chunk, accepted?.size ?? -1)
      const gate = new ByteGate(body, chunk.chunkSize, maxChunk)
      const [resent, stored] = await Promise.all([sha256Of(gate), this.storedChunkDigest(session.id, accepted!)])
      this.checkGate(gate, chunk)
      if (resent !== stored)
        throw new ApiError('UPLOAD_DIFFERENT_FILE', { details: { uploadId: session.id, chunkIndex: chunk.chunkIndex, clientRequestId: session.clientRequestId } })
      return view(session)
    }
    if (chunk.chunkIndex > session.nextChunkIndex)
      throw new ApiError('UPLOAD_CHUNK_OUT_OF_ORDER', {
        details: { uploadId: session.id, chunkIndex: chunk.chunkIndex, nextChunkIndex: String(session.nextChunkIndex) },
      })
    checkChunkPlacement(chunk, session, maxChunk)
    await this.alignFile(session)

    const gate = new ByteGate(body, chunk.chunkSize, maxChunk, { purpose: chunk.purpose, uploadId: session.id })
    const onAbort = () => gate.stop(new ApiError('UPLOAD_CANCELLED', { details: { uploadId: session.id, state: 'cancelled' } }))
    write.abort.signal.addEventListener('abort', onAbort, { once: true })
    this.knownFileSizes.delete(session.id) // unknown until this chunk is accepted or rolled back
    try {
      await this.core.store.writeChunk(gate, session.id, session.receivedBytes)
      this.checkGate(gate, chunk)
      if (chunk.chunkIndex === session.totalChunks - 1 && session.sha256) await this.core.verifySha256(session)
      const now = this.core.clock.now()
      if (!(await this.core.states.commitChunk(session, chunk.chunkSize, now))) {
        const fresh = await this.core.repo.find(session.id)
        throw (fresh && endedSessionError(fresh)) ?? new ApiError('TRANSFER_BUSY', { details: { uploadId: session.id } })
      }
      this.core.times.touched(session.id, now)
      this.core.received('uploadTemp', chunk.chunkSize)
      // A complete session takes no more chunks (a resent one is only counted, never written).
      if (chunk.chunkIndex < session.totalChunks - 1) this.knownFileSizes.set(session.id, session.receivedBytes + chunk.chunkSize)
    } catch (error) {
      // Leave the session exactly as it was: drop whatever part of this chunk reached the file.
      await truncate(this.core.filePath(session.id), session.receivedBytes).then(
        () => this.knownFileSizes.set(session.id, session.receivedBytes), () => undefined)
      throw error
    } finally {
      write.abort.signal.removeEventListener('abort', onAbort)
    }
    return view({ ...session, nextChunkIndex: session.nextChunkIndex + 1 })
  }

  /** chunkSize must equal the bytes received (spec 4.5); a stopped gate carries its reason. */
  private checkGate(gate: ByteGate, chunk: ChunkFields): void {
    if (gate.failure) throw gate.failure
    if (gate.received !== chunk.chunkSize)
      throw new ApiError('UPLOAD_PARAMETERS_MISMATCH', {
        details: { field: 'chunkSize', expected: chunk.chunkSize, actual: gate.received },
        msgText: `chunkSize: declared ${chunk.chunkSize} bytes, received ${gate.received}`,
      })
  }

  /**
   * Makes the stored file end where the manifest says (a process killed mid-chunk may have
   * left extra bytes); bytes missing from it mean the file was lost: the session fails.
   */
  private async alignFile(session: UploadSessionRow): Promise<void> {
    if (this.knownFileSizes.get(session.id) === session.receivedBytes) return
    const file = this.core.filePath(session.id)
    const size = await stat(file).then((s) => s.size, () => -1)
    if (size > session.receivedBytes) await truncate(file, session.receivedBytes)
    if (size >= session.receivedBytes) this.knownFileSizes.set(session.id, session.receivedBytes)
    if (size < session.receivedBytes) {
      await this.core.endAndDelete(session, 'fail', 'stored bytes are missing')
      throw new ApiError('UPLOAD_FAILED', { details: { uploadId: session.id, state: 'failed', reason: 'stored bytes are missing' } })
    }
  }

  private storedChunkDigest(uploadId: string, { offset, size }: { offset: number; size: number }): Promise<string> {
    // createReadStream's range is inclusive; an empty chunk (an empty file) has nothing to read.
    return sha256Of(size === 0 ? Readable.from([]) : createReadStream(this.core.filePath(uploadId), { start: offset, end: offset + size - 1 }))
  }
}

const view = (session: Pick<UploadSessionRow, 'id' | 'nextChunkIndex' | 'totalChunks'>): UploadSessionView => ({
  uploadId: session.id,
  nextChunkIndex: String(session.nextChunkIndex),
  complete: session.nextChunkIndex >= session.totalChunks,
  filePath: `upload://${session.id}`,
})
