import type { Upload } from '@tus/server'
import type { Identity } from '../../shared/handler.ts'
import type { ChunkFields } from '../../shared/uploads/index.ts'
import { expiryOf } from './expiry.ts'
import type { SessionWrite } from './locks.ts'
import type { UploadSessionRow } from './repository.ts'
import { checkChunkFields, metadataBytesOf } from './rules.ts'
import type { SessionCore } from './session-core.ts'
import type { StoreHooks } from './session-store.ts'

/**
 * The tus protocol: one adapter around the session core (session-core.ts), beside the
 * uploadTemp one (upload-temp.ts). The native tus endpoint's sessions (runtime/uploads/tus.ts): tus creation, PATCH, finish,
 * termination and expiration mapped onto the session state machine of spec 3.1, with the
 * same store, admission and reservations as uploadTemp. Also the store's hooks: the store
 * calls them around tus writes and removals, and they ignore sessions that are not tus's.
 */
export class TusSessions implements StoreHooks {
  constructor(private readonly core: SessionCore) {}

  /** tus creation: the same admission as uploadTemp chunk 0, under the same lock (spec 2.5). */
  async admit(identity: Identity, upload: Upload): Promise<void> {
    const filename = upload.metadata?.filename ?? upload.metadata?.name ?? ''
    const purpose = upload.metadata?.purpose || 'file'
    const sha256 = upload.metadata?.sha256?.toLowerCase() || undefined
    const chunk: ChunkFields = { filename, purpose, chunkIndex: 0, totalChunks: 1, totalSize: upload.size ?? 0, chunkSize: 0, sha256 }
    try {
      checkChunkFields({ ...chunk, totalChunks: Math.max(1, Math.ceil(chunk.totalSize / this.core.config.uploadMaxChunkBytes)) }, this.core.config)
      // @tus/server creates the file right after: no empty file here.
      const spec = { source: 'tus' as const, filename, purpose, totalSize: chunk.totalSize, totalChunks: 1, sha256, metadataBytes: metadataBytesOf(chunk) }
      await this.core.admission.exclusive(() => this.core.admission.admit(identity, spec, upload.id))
    } catch (error) {
      this.core.refused('tus', error)
      throw error
    }
  }

  /** For tus requests on an existing upload: the caller's live tus session, or the error to answer. */
  session(identity: Identity, uploadId: string): Promise<UploadSessionRow> {
    return this.core.ownLiveSession(identity, uploadId, 'tus')
  }

  /** tus PATCH: writes under the session's write lock, like an uploadTemp chunk. */
  beginWrite(uploadId: string): Promise<SessionWrite> {
    return this.core.openWrite(uploadId)
  }

  /** The store's offset after a tus PATCH is the truth; the manifest mirrors it, and completes the session. */
  async afterWrite(uploadId: string, offset: number): Promise<void> {
    const session = await this.core.repo.find(uploadId)
    if (!session || session.source !== 'tus' || session.state !== 'open') return
    if (offset === session.totalSize && session.sha256) {
      try {
        await this.core.verifySha256(session)
      } catch {
        // tus checksum extension: 460 Checksum Mismatch.
        throw { status_code: 460, body: 'Checksum Mismatch: the sha256 of the file differs from its metadata; the upload failed\n' }
      }
    }
    const now = this.core.clock.now()
    await this.core.states.tusProgress(session, offset, now)
    this.core.times.touched(uploadId, now)
    this.core.received('tus', offset - session.receivedBytes)
  }

  /**
   * An upload finished. @tus/server finishes an empty file at creation without any write, so no
   * afterWrite ran for it; recording its offset completes it like any other (an empty file is a
   * valid upload, as in uploadTemp: one empty chunk). Idempotent for the others.
   */
  finish(uploadId: string, offset: number): Promise<void> {
    return this.afterWrite(uploadId, offset)
  }

  /** tus termination = cancelUpload (spec 4.6): reservation released at once, then the store removes the bytes. */
  async beforeRemove(uploadId: string): Promise<void> {
    await this.core.states.end(uploadId, 'cancel', 'tus termination')
    await this.core.repo.markBytesDeleted(uploadId, this.core.clock.now())
  }

  /**
   * tus expiration extension: when an unfinished upload expires, by the same rule as uploadTemp
   * sessions: what is left of its time (monotonic) from the wall clock's now.
   */
  async expiresAt(uploadId: string): Promise<number | null> {
    const session = await this.core.repo.find(uploadId)
    const expiry = session?.state === 'open' ? expiryOf(session, this.core.times.ages(session), this.core.config) : null
    return expiry ? this.core.clock.now() + Math.max(0, expiry.inMs) : null
  }
}
