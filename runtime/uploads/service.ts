import type { EventsService } from '../../shared/events/types.ts'
import { createHash, randomBytes } from 'node:crypto'
import { createReadStream, mkdirSync } from 'node:fs'
import { rm, stat, truncate, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { Readable } from 'node:stream'
import { SessionFileStore } from './session-store.ts'
import { TusSessions } from './tus-sessions.ts'
import type { Config } from '../../shared/config.ts'
import type { Db } from '../../shared/db/client.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { Clock, Identity, Logger } from '../../shared/handler.ts'
import type {
  ChunkFields, ClaimedUpload, SweepResult, UploadCapabilities, UploadLease, UploadService, UploadSessionView, UploadState,
} from '../../shared/uploads/index.ts'
import { ByteGate } from '../../shared/uploads/byte-gate.ts'
import type { DeviceMetrics, UploadProtocol } from '../metrics/index.ts'
import { capacityOf, statDisk, type Capacity, type StatDisk } from './capacity.ts'
import { expiryOf } from './expiry.ts'
import { SessionTimes } from './session-times.ts'
import { Mutex, SessionWriteLocks, type SessionWrite } from './locks.ts'
import { UploadRepository, type UploadSessionRow } from './repository.ts'
import {
  checkChunkFields, checkChunkPlacement, checkResentChunk, checkSameFile, endedSessionError, metadataBytesOf,
} from './rules.ts'

export interface UploadServiceOptions {
  db: Db
  config: Config
  clock: Clock
  log: Logger
  /** Staging folder of the tus FileStore; default `<DATA_DIR>/uploads`. */
  stagingDir?: string
  /** Free-space probe of the staging filesystem (default `fs.statfs`). */
  statDisk?: StatDisk
  /** Run `sweep()` every `uploadSweepIntervalMs` (default true; tests sweep by hand). */
  sweepTimer?: boolean
  /** Where admission refusals and expiries are reported (`upload.*` events, spec 6). */
  events?: Pick<EventsService, 'emit'>
  /** Bytes accepted and refusals, by protocol (docs/metrics.md "Metrics"). */
  metrics?: DeviceMetrics['uploads']
}

/** What a new session needs, whichever protocol opens it (uploadTemp chunk 0 or tus creation). */
export interface NewSession {
  source: 'uploadTemp' | 'tus'
  filename: string
  purpose: string
  totalSize: number
  totalChunks: number
  clientRequestId?: string
  sha256?: string
  metadataBytes: number
}

async function sha256Of(source: Readable): Promise<string> {
  const hash = createHash('sha256')
  await pipeline(source, hash)
  return hash.digest('hex')
}

const notFound = (uploadId: string) => new ApiError('UPLOAD_NOT_FOUND', { details: { uploadId } })

/**
 * The upload service (shared/uploads/types.ts): session manifests in libsql, bytes in a tus
 * FileStore. Implements the state machine of spec 3.1 and the uploadTemp protocol of spec
 * 4.4-4.6; the native tus endpoint drives the same sessions through `tus` (tus-sessions.ts).
 */
export class UploadManager implements UploadService {
  readonly store: SessionFileStore
  readonly stagingDir: string
  readonly repo: UploadRepository
  readonly tus: TusSessions
  private readonly admission = new Mutex()
  private readonly locks = new SessionWriteLocks()
  private readonly statDisk: StatDisk
  private readonly timer: NodeJS.Timeout | null
  /**
   * Size of each uploadTemp session's file as this process last left it (after an accepted or
   * rolled-back chunk), so that alignFile need not stat the file before every chunk. Empty
   * after a restart: the first chunk then checks the file on disk.
   */
  private readonly knownFileSizes = new Map<string, number>()
  /** Session ages on the monotonic clock: expiry ignores wall-clock steps (docs/uploads.md "Expiry and the clock"). */
  private readonly times: SessionTimes
  /** Claimed files whose consumer keeps them past the idle timeout until it releases them (`claim`'s keepUntilRelease). */
  readonly #kept = new Set<string>()

  constructor(private readonly options: UploadServiceOptions) {
    this.stagingDir = path.resolve(options.stagingDir ?? path.join(options.config.dataPath, 'uploads'))
    mkdirSync(this.stagingDir, { recursive: true })
    this.repo = new UploadRepository(options.db)
    this.times = new SessionTimes(options.clock)
    // The store's hooks keep tus sessions' manifests in step with the tus protocol (tus-sessions.ts).
    this.tus = new TusSessions(this, this.repo, options.config, options.clock, this.times)
    this.store = new SessionFileStore(this.stagingDir, this.tus)
    this.statDisk = options.statDisk ?? statDisk
    this.timer = options.sweepTimer === false ? null : setInterval(() => {
      this.sweep().catch((error) => options.log.error({ err: error }, 'upload sweep failed'))
    }, options.config.uploadSweepIntervalMs)
    this.timer?.unref()
  }

  /**
   * Anchors every live session of the database (left by a previous run) on the monotonic clock
   * at start, before the wall clock can be stepped: their age from then on is monotonic.
   */
  start(): Promise<void> {
    this.anchored ??= this.repo.listLive().then((sessions) => { for (const session of sessions) this.times.ages(session) })
    return this.anchored
  }

  private anchored: Promise<void> | undefined

  private get config(): Config { return this.options.config }
  private now(): number { return this.options.clock.now() }

  /** Absolute path of a session's bytes; the id is server-made (hex), never client text. */
  filePath(uploadId: string): string { return path.join(this.stagingDir, uploadId) }

  /** What new uploads may take now, due sessions expired first (their reservations released). */
  async capacity(): Promise<Capacity> {
    await this.expireDue()
    return this.measureCapacity()
  }

  private async measureCapacity(): Promise<Capacity> {
    const [disk, { reservedBytes }] = await Promise.all([this.statDisk(this.stagingDir), this.repo.reservations()])
    return capacityOf(disk, reservedBytes, this.config)
  }

  async capabilities(): Promise<UploadCapabilities> {
    const capacity = await this.capacity()
    const { activeSessions } = await this.repo.reservations()
    const c = this.config
    return {
      maxTotalSize: String(c.uploadMaxTotalBytes),
      maxChunkSize: String(c.uploadMaxChunkBytes),
      maxChunks: c.uploadMaxChunks,
      availableBytes: String(capacity.availableBytes),
      reserveBytes: String(capacity.reserveBytes),
      availableForNewUploadsBytes: String(capacity.availableForNewUploadsBytes),
      reservedBySessionsBytes: String(capacity.reservedBySessionsBytes),
      activeSessions,
      idleTimeoutMs: c.uploadIdleTimeoutMs,
      absoluteTimeoutMs: c.uploadAbsoluteTimeoutMs,
      resumable: true,
      persistentAcrossRestart: c.databaseUrl !== ':memory:',
      maxEncodedImageBytes: String(c.maxEncodedImageBytes),
      maxImagePixels: c.maxImagePixels,
    }
  }

  async putChunk(identity: Identity, chunk: ChunkFields, body: Readable): Promise<UploadSessionView> {
    try {
      checkChunkFields(chunk, this.config)
      if (chunk.uploadId === undefined) return await this.openOrResume(identity, chunk, body)
      const { id } = await this.ownSession(identity, chunk.uploadId, 'uploadTemp')
      const write = this.locks.acquire(id)
      try {
        return await this.acceptChunk(id, chunk, body, write)
      } finally {
        write.release()
      }
    } catch (error) {
      this.refused('uploadTemp', error)
      throw error
    } finally {
      body.resume() // whatever happened, let the rest of the body drain
    }
  }

  /** spec 3.1 rows 1–2: chunk 0 opens a session after admission, or resumes the caller's live one (spec 4.12). */
  private async openOrResume(identity: Identity, chunk: ChunkFields, body: Readable): Promise<UploadSessionView> {
    const { session, write, created } = await this.admission.run(async () => {
      if (chunk.clientRequestId !== undefined) {
        const existing = await this.repo.findLiveByRequest(identity.userId, chunk.clientRequestId)
        if (existing && existing.source === 'uploadTemp' && !(await this.expireIfDue(existing))) {
          checkSameFile(chunk, existing)
          return { session: existing, write: this.locks.acquire(existing.id), created: false }
        }
      }
      const session = await this.admit(identity, {
        source: 'uploadTemp', filename: chunk.filename, purpose: chunk.purpose, totalSize: chunk.totalSize,
        totalChunks: chunk.totalChunks, clientRequestId: chunk.clientRequestId, sha256: chunk.sha256,
        metadataBytes: metadataBytesOf(chunk),
      })
      return { session, write: this.locks.acquire(session.id), created: true }
    })
    try {
      // A session made by this request is current: its write lock was taken as it was inserted.
      return await this.acceptChunk(session.id, chunk, body, write, created ? session : undefined)
    } catch (error) {
      // A session whose first chunk failed never existed for the client: undo it entirely.
      if (created) await this.forget(session.id)
      throw error
    } finally {
      write.release()
    }
  }

  /**
   * Admission (call inside `this.admission`): the whole file must fit in
   * availableForNewUploadsBytes, else STORAGE_RESERVE_REACHED (spec 2.5, 7.1, 8). Reserves it
   * by inserting the open manifest, and creates the empty file of an uploadTemp session.
   */
  async admit(identity: Identity, spec: NewSession, uploadId = randomBytes(16).toString('hex'), createFile = true): Promise<UploadSessionRow> {
    // Due sessions are expired here only when the upload would not fit without their
    // reservations; the sweeper expires them anyway, so an upload that fits costs no search.
    let capacity = await this.measureCapacity()
    if (spec.totalSize > capacity.availableForNewUploadsBytes && (await this.expireDue()) > 0) capacity = await this.measureCapacity()
    if (spec.totalSize > capacity.availableForNewUploadsBytes) {
      await this.report('storage.reserveReached', {
        purpose: spec.purpose, requiredBytes: spec.totalSize, availableBytes: capacity.availableBytes,
        reserveBytes: capacity.reserveBytes, availableForNewUploadsBytes: capacity.availableForNewUploadsBytes,
      })
      throw new ApiError('STORAGE_RESERVE_REACHED', {
        details: {
          requiredBytes: spec.totalSize, availableBytes: capacity.availableBytes, reserveBytes: capacity.reserveBytes,
          reservedBySessionsBytes: capacity.reservedBySessionsBytes, availableForNewUploadsBytes: capacity.availableForNewUploadsBytes,
          purpose: spec.purpose,
        },
      })
    }
    const now = this.now()
    const row: UploadSessionRow = {
      id: uploadId, userId: identity.userId, source: spec.source, clientRequestId: spec.clientRequestId ?? null,
      filenameJson: JSON.stringify(spec.filename), purpose: spec.purpose, totalChunks: spec.totalChunks,
      totalSize: spec.totalSize, sha256: spec.sha256 ?? null, state: 'open', nextChunkIndex: 0, receivedBytes: 0,
      metadataBytes: spec.metadataBytes, createdAt: now, lastActivityAt: now, endedAt: null, endReason: null, bytesDeletedAt: null,
    }
    await this.repo.insert(row)
    this.times.touched(uploadId, now, true)
    if (!createFile) return row // tus creation: @tus/server creates the file right after
    try {
      // An uploadTemp session's bytes only: the tus endpoint never serves it, so the store's
      // own record of an upload (a JSON file beside the bytes) would be written for nothing.
      await writeFile(this.filePath(uploadId), '', { flag: 'wx' })
      this.knownFileSizes.set(uploadId, 0)
    } catch (error) {
      await this.repo.deleteSession(uploadId)
      throw error
    }
    return row
  }

  /** spec 3.1 rows 3–4 (and idempotent resend): one chunk of a session whose write lock is held. */
  private async acceptChunk(uploadId: string, chunk: ChunkFields, body: Readable, write: SessionWrite, created?: UploadSessionRow): Promise<UploadSessionView> {
    // Read the session only now that the lock is held: a row read before may be stale, since a
    // writer that released the lock meanwhile may have accepted this very chunk (a resend, spec
    // 4.12); acting on the stale row would truncate that committed chunk away.
    const session = created ?? await this.liveSession(uploadId)
    checkSameFile(chunk, session)
    const maxChunk = this.config.uploadMaxChunkBytes

    if (chunk.chunkIndex < session.nextChunkIndex) {
      // Already accepted: acknowledge without writing it again (spec 4.12 resend after a lost
      // answer). Spec 3.1 resumes only the same file: a resend must carry the bytes stored for
      // that chunk (the same clientRequestId and sizes do not make it the same file).
      const accepted = await this.repo.chunk(session.id, chunk.chunkIndex)
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
      await this.store.writeChunk(gate, session.id, session.receivedBytes)
      this.checkGate(gate, chunk)
      if (chunk.chunkIndex === session.totalChunks - 1 && session.sha256) await this.verifySha256(session)
      const now = this.now()
      if (!(await this.repo.commitChunk(session, chunk.chunkSize, now))) {
        const fresh = await this.repo.find(session.id)
        throw (fresh && endedSessionError(fresh)) ?? new ApiError('TRANSFER_BUSY', { details: { uploadId: session.id } })
      }
      this.times.touched(session.id, now)
      this.received('uploadTemp', chunk.chunkSize)
      // A complete session takes no more chunks (a resent one is only counted, never written).
      if (chunk.chunkIndex < session.totalChunks - 1) this.knownFileSizes.set(session.id, session.receivedBytes + chunk.chunkSize)
    } catch (error) {
      // Leave the session exactly as it was: drop whatever part of this chunk reached the file.
      await truncate(this.filePath(session.id), session.receivedBytes).then(
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
    const file = this.filePath(session.id)
    const size = await stat(file).then((s) => s.size, () => -1)
    if (size > session.receivedBytes) await truncate(file, session.receivedBytes)
    if (size >= session.receivedBytes) this.knownFileSizes.set(session.id, session.receivedBytes)
    if (size < session.receivedBytes) {
      await this.endAndDelete(session, 'failed', 'stored bytes are missing')
      throw new ApiError('UPLOAD_FAILED', { details: { uploadId: session.id, state: 'failed', reason: 'stored bytes are missing' } })
    }
  }

  private storedChunkDigest(uploadId: string, { offset, size }: { offset: number; size: number }): Promise<string> {
    // createReadStream's range is inclusive; an empty chunk (an empty file) has nothing to read.
    return sha256Of(size === 0 ? Readable.from([]) : createReadStream(this.filePath(uploadId), { start: offset, end: offset + size - 1 }))
  }

  /** When sha256 was given, the completed file must match it; else the session fails and is released. */
  async verifySha256(session: UploadSessionRow): Promise<void> {
    const actual = await sha256Of(createReadStream(this.filePath(session.id)))
    if (actual === session.sha256) return
    await this.endAndDelete(session, 'failed', 'sha256 mismatch')
    throw new ApiError('UPLOAD_CHECKSUM_MISMATCH', { details: { uploadId: session.id, expected: session.sha256, actual, state: 'failed' } })
  }

  /** Counts bytes accepted into a session (docs/metrics.md "Metrics"). */
  received(protocol: UploadProtocol, bytes: number): void {
    if (bytes > 0) this.options.metrics?.receivedBytes.inc({ protocol }, bytes)
  }

  /** Counts a refused chunk or creation by its catalogue error id (a bounded label set); `other` for the rest (HTTP body limit, internal failure). */
  refused(protocol: UploadProtocol, error: unknown): void {
    this.options.metrics?.refusals.inc({ protocol, reason: error instanceof ApiError ? error.id : 'other' })
  }

  /** How many sessions the database holds in each state of spec 3.1 (every state listed). */
  async sessionsByState(): Promise<Record<UploadState, number>> {
    const counts: Record<UploadState, number> = { open: 0, complete: 0, consumed: 0, cancelled: 0, expired: 0, failed: 0 }
    for (const { state, count } of await this.repo.countByState()) if (state in counts) counts[state as UploadState] = count
    return counts
  }

  /** spec 3.1 "open or complete → cancelled": reservation released at once, then the bytes deleted. */
  async cancel(identity: Identity, uploadId: string): Promise<void> {
    const session = await this.ownSession(identity, uploadId)
    if (await this.expireIfDue(session)) throw endedSessionError({ ...session, state: 'expired' })!
    if (!(await this.repo.end(uploadId, ['open', 'complete'], 'cancelled', this.now(), 'cancelled by client'))) {
      const fresh = await this.repo.find(uploadId)
      throw (fresh && endedSessionError(fresh)) ?? notFound(uploadId)
    }
    const write = this.locks.get(uploadId)
    if (write) {
      write.abort.abort()
      await write.done
    }
    await this.deleteBytes(uploadId)
  }

  /** spec 3.1 "complete → consumed" (shared/uploads/types.ts documents the contract). */
  async claim(uploadId: string, identity: Identity, purpose: string, options: { keepUntilRelease?: boolean } = {}): Promise<ClaimedUpload> {
    const session = await this.ensureLive(await this.ownSession(identity, uploadId))
    if (session.state !== 'complete')
      throw new ApiError('UPLOAD_NOT_COMPLETE', {
        details: { uploadId, nextChunkIndex: String(session.nextChunkIndex), receivedBytes: session.receivedBytes, totalSize: session.totalSize },
      })
    if (session.purpose !== purpose)
      throw new ApiError('UPLOAD_PURPOSE_MISMATCH', { details: { uploadId, expected: purpose, actual: session.purpose, purpose } })
    const now = this.now()
    if (!(await this.repo.end(uploadId, ['complete'], 'consumed', now, 'claimed'))) {
      const fresh = await this.repo.find(uploadId)
      throw (fresh && endedSessionError(fresh)) ?? notFound(uploadId)
    }
    this.times.claimed(uploadId, now)
    if (options.keepUntilRelease) this.#kept.add(uploadId)
    return {
      uploadId,
      path: this.filePath(uploadId),
      originalFilename: JSON.parse(session.filenameJson) as string,
      size: session.totalSize,
      purpose: session.purpose,
      sha256: session.sha256,
      release: async () => {
        this.#kept.delete(uploadId)
        await this.deleteBytes(uploadId)
      },
    }
  }

  /** spec 4.7 "successful claim … consumes it": a claim undone when the consumer fails (shared/uploads/types.ts). */
  async lease(uploadId: string, identity: Identity, purpose: string): Promise<UploadLease> {
    const { release, ...claimed } = await this.claim(uploadId, identity, purpose)
    let settled = false
    const settle = (step: () => Promise<unknown>) => async () => {
      if (settled) return
      settled = true
      await step()
    }
    return { ...claimed, commit: settle(release), abandon: settle(() => this.repo.unclaim(uploadId)) }
  }

  /** spec 3.1 "open → expired": expires due sessions, and deletes bytes that released sessions left behind. */
  async sweep(): Promise<SweepResult> {
    const expired = await this.expireDue()
    let deletedFiles = 0
    for (const session of await this.repo.endedWithBytes()) {
      // A consumer may still be reading a claimed file; forgotten ones go after the idle timeout (monotonic).
      if (session.state === 'consumed' && (this.#kept.has(session.id) || this.times.sinceClaimed(session.id, session.endedAt ?? 0) < this.config.uploadIdleTimeoutMs)) continue
      if (this.locks.get(session.id)) continue
      await this.deleteBytes(session.id)
      this.times.forget(session.id)
      deletedFiles++
    }
    return { expired, deletedFiles }
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
  }

  /**
   * Sessions past their idle or absolute deadline, except those being written right now. The
   * candidates: the rows the wall clock says are due (a session not anchored yet) and the
   * anchored sessions the monotonic clock says are due (the wall clock may have been stepped
   * back); each is then judged on the monotonic clock.
   */
  private async expireDue(): Promise<number> {
    await this.start() // a service used before its start (tests) anchors its sessions first
    const { uploadIdleTimeoutMs: idleMs, uploadAbsoluteTimeoutMs: absoluteMs } = this.config
    const candidates = new Map((await this.repo.listDue(this.now(), idleMs, absoluteMs)).map((session) => [session.id, session]))
    for (const id of this.times.due(idleMs, absoluteMs)) {
      if (candidates.has(id)) continue
      const session = await this.repo.find(id)
      if (session?.state === 'open' || session?.state === 'complete') candidates.set(id, session)
      else this.times.forget(id)
    }
    let count = 0
    for (const session of candidates.values())
      if (!this.locks.get(session.id) && (await this.expireIfDue(session))) count++
    return count
  }

  /** The session as it is now (read under its write lock), expired first when due; the error of an ended one. */
  private async liveSession(uploadId: string): Promise<UploadSessionRow> {
    const session = await this.repo.find(uploadId)
    if (!session) throw notFound(uploadId)
    return this.ensureLive(session)
  }

  /** The session when it is open or complete (expired first when due); the error of an ended one otherwise. */
  private async ensureLive(session: UploadSessionRow): Promise<UploadSessionRow> {
    if (await this.expireIfDue(session)) throw endedSessionError({ ...session, state: 'expired' })!
    const ended = endedSessionError(session)
    if (ended) throw ended
    return session
  }

  private async expireIfDue(session: UploadSessionRow): Promise<boolean> {
    const expiry = expiryOf(session, this.times.ages(session), this.config)
    if (!expiry || expiry.inMs > 0) return false
    await this.endAndDelete(session, 'expired', expiry.reason)
    return true
  }

  private async endAndDelete(session: UploadSessionRow, to: 'expired' | 'failed', reason: string): Promise<void> {
    if (!(await this.repo.end(session.id, [session.state as 'open'], to, this.now(), reason))) return
    this.times.forget(session.id)
    if (to === 'expired') await this.report('upload.expired', { uploadId: session.id, purpose: session.purpose, reason, receivedBytes: session.receivedBytes })
    await this.deleteBytes(session.id)
  }

  /** An event must never turn into the failure of the operation that reports it. */
  private async report(kind: 'storage.reserveReached' | 'upload.expired', payload: Record<string, unknown>): Promise<void> {
    await this.options.events?.emit(kind, payload).catch((error: unknown) => this.options.log.error({ err: error, kind }, 'upload event not written'))
  }

  /** Deletes a session's bytes and its store record; idempotent. */
  async deleteBytes(uploadId: string): Promise<void> {
    await this.removeFiles(uploadId)
    await this.repo.markBytesDeleted(uploadId, this.now())
  }

  /** Removes a session that never became visible (its first chunk failed). */
  private async forget(uploadId: string): Promise<void> {
    await this.removeFiles(uploadId)
    await this.repo.deleteSession(uploadId)
  }

  /** The bytes, and the tus store's record beside them (`<id>.json`, tus sessions only). */
  private async removeFiles(uploadId: string): Promise<void> {
    this.knownFileSizes.delete(uploadId)
    await rm(this.filePath(uploadId), { force: true })
    await rm(`${this.filePath(uploadId)}.json`, { force: true })
  }

  /**
   * Opens a write on a live session under its write lock (a tus PATCH, like an uploadTemp
   * chunk): the sweeper skips a session being written (activity, spec 3.1 / 8) and cancel
   * stops it. The session is read under the lock: it may have ended since the request was checked.
   */
  async openWrite(uploadId: string): Promise<SessionWrite> {
    const write = this.locks.acquire(uploadId)
    try {
      await this.liveSession(uploadId)
      return write
    } catch (error) {
      write.release()
      throw error
    }
  }

  /** The caller's live session of one protocol, expired first when due; the error to answer otherwise. */
  async ownLiveSession(identity: Identity, uploadId: string, source: 'uploadTemp' | 'tus'): Promise<UploadSessionRow> {
    return this.ensureLive(await this.ownSession(identity, uploadId, source))
  }

  /** Admission under the admission lock (spec 2.5): for a protocol that opens sessions itself (tus creation). */
  admitExclusive(identity: Identity, spec: NewSession, uploadId: string, createFile: boolean): Promise<UploadSessionRow> {
    return this.admission.run(() => this.admit(identity, spec, uploadId, createFile))
  }

  /** spec 2.5 / 5.4: a session is visible only to the user who created it; others get "unknown". */
  async ownSession(identity: Identity, uploadId: string, source?: 'uploadTemp' | 'tus'): Promise<UploadSessionRow> {
    const session = await this.repo.find(uploadId)
    if (!session || session.userId !== identity.userId || (source && session.source !== source)) throw notFound(uploadId)
    return session
  }
}

const view = (session: Pick<UploadSessionRow, 'id' | 'nextChunkIndex' | 'totalChunks'>): UploadSessionView => ({
  uploadId: session.id,
  nextChunkIndex: String(session.nextChunkIndex),
  complete: session.nextChunkIndex >= session.totalChunks,
  filePath: `upload://${session.id}`,
})

export const createUploadService = (options: UploadServiceOptions): UploadManager => new UploadManager(options)
