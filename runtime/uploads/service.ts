import type { EventsService } from '../../shared/events/types.ts'
import { createReadStream, mkdirSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { TusSessions } from './tus-sessions.ts'
import type { Config } from '../../shared/config.ts'
import type { Db } from '../db/client.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { Clock, Identity, Logger } from '../../shared/handler.ts'
import type {
  ChunkFields, ClaimedUpload, SweepResult, UploadCapabilities, UploadLease, UploadService, UploadSessionView, UploadState,
} from '../../shared/uploads/index.ts'
import type { DeviceMetrics, UploadProtocol } from '../metrics/index.ts'
import { Admission } from './admission.ts'
import { statDisk, type Capacity, type StatDisk } from './capacity.ts'
import { sha256Of } from '../digest.ts'
import { expiryOf } from './expiry.ts'
import { SessionWriteLocks, type SessionWrite } from './locks.ts'
import { UploadRepository, type UploadSessionRow } from './repository.ts'
import { endedSessionError } from './rules.ts'
import type { SessionCore } from './session-core.ts'
import { SessionStates } from './session-states.ts'
import { SessionFileStore } from './session-store.ts'
import { SessionTimes } from './session-times.ts'
import { Sweeper } from './sweeper.ts'
import { UploadTempSessions } from './upload-temp.ts'

export type { NewSession } from './admission.ts'

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

const notFound = (uploadId: string) => new ApiError('UPLOAD_NOT_FOUND', { details: { uploadId } })

/**
 * The upload service (shared/uploads/types.ts) and the session core of spec 3.1: session
 * manifests in libsql, bytes in a tus FileStore, every state change through the transition
 * table (transitions.ts, written by session-states.ts). The two protocols are adapters around
 * it: `uploadTemp` (upload-temp.ts, spec 4.5-4.6) and the native tus endpoint (tus-sessions.ts).
 */
export class UploadManager implements UploadService, SessionCore {
  readonly store: SessionFileStore
  readonly stagingDir: string
  readonly repo: UploadRepository
  readonly states: SessionStates
  readonly tus: TusSessions
  readonly uploadTemp: UploadTempSessions
  readonly admission: Admission
  readonly locks = new SessionWriteLocks()
  private readonly timer: NodeJS.Timeout | null
  /** Session ages on the monotonic clock: expiry ignores wall-clock steps (docs/uploads.md "Expiry and the clock"). */
  readonly times: SessionTimes
  /**
   * Claimed files whose consumer is still working on them: `claim`'s keepUntilRelease until its
   * release, and every lease until its commit or abandon. The sweeper leaves their bytes alone.
   */
  readonly #kept = new Set<string>()
  private readonly sweeper: Sweeper

  constructor(private readonly options: UploadServiceOptions) {
    this.stagingDir = path.resolve(options.stagingDir ?? path.join(options.config.dataPath, 'uploads'))
    mkdirSync(this.stagingDir, { recursive: true })
    this.repo = new UploadRepository(options.db)
    this.states = new SessionStates(this.repo, options.clock)
    this.times = new SessionTimes(options.clock)
    this.admission = new Admission({
      config: options.config, clock: options.clock, repo: this.repo, states: this.states, times: this.times,
      stagingDir: this.stagingDir, statDisk: options.statDisk ?? statDisk,
      expireDue: () => this.expireDue(), report: (kind, payload) => this.report(kind, payload),
    })
    this.sweeper = new Sweeper(this, this.#kept)
    this.uploadTemp = new UploadTempSessions(this)
    // The store's hooks keep tus sessions' manifests in step with the tus protocol (tus-sessions.ts).
    this.tus = new TusSessions(this)
    this.store = new SessionFileStore(this.stagingDir, this.tus)
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

  get config(): Config { return this.options.config }
  get clock(): Clock { return this.options.clock }
  private now(): number { return this.options.clock.now() }

  /** Absolute path of a session's bytes; the id is server-made (hex), never client text. */
  filePath(uploadId: string): string { return path.join(this.stagingDir, uploadId) }

  /** What new uploads may take now, due sessions expired first (their reservations released). */
  capacity(): Promise<Capacity> { return this.admission.capacity() }

  capabilities(): Promise<UploadCapabilities> { return this.admission.capabilities() }

  /** `uploadTemp` (spec 4.5): the uploadTemp adapter's, for a chunk and for the whole multipart request. */
  putChunk(identity: Identity, chunk: ChunkFields, body: Readable): Promise<UploadSessionView> { return this.uploadTemp.putChunk(identity, chunk, body) }
  receiveChunk(identity: Identity, request: Request): Promise<UploadSessionView> { return this.uploadTemp.receive(identity, request) }

  /** When sha256 was given, the completed file must match it; else the session fails and is released. */
  async verifySha256(session: UploadSessionRow): Promise<void> {
    const actual = await sha256Of(createReadStream(this.filePath(session.id)))
    if (actual === session.sha256) return
    await this.endAndDelete(session, 'fail', 'sha256 mismatch')
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
  sessionsByState(): Promise<Record<UploadState, number>> { return this.repo.sessionsByState() }

  /** spec 3.1 "open or complete → cancelled": reservation released at once, then the bytes deleted. */
  async cancel(identity: Identity, uploadId: string): Promise<void> {
    const session = await this.ownSession(identity, uploadId)
    if (await this.expireIfDue(session)) throw endedSessionError({ ...session, state: 'expired' })!
    if (!(await this.states.end(uploadId, 'cancel', 'cancelled by client'))) {
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
    if (!(await this.states.end(uploadId, 'claim', 'claimed'))) {
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
    // Held like a keepUntilRelease claim: the consumer (a camera file, a restore, a detection …)
    // may work on the file past the idle timeout; the sweeper must not delete it under it.
    const { release, ...claimed } = await this.claim(uploadId, identity, purpose, { keepUntilRelease: true })
    let settled = false
    const settle = (step: () => Promise<unknown>) => async () => {
      if (settled) return
      settled = true
      await step()
    }
    return { ...claimed, commit: settle(release), abandon: settle(async () => {
      this.#kept.delete(uploadId)
      await this.states.unclaim(uploadId)
    }) }
  }

  /** spec 3.1 "open → expired": expires due sessions, and deletes bytes that released sessions left behind. */
  sweep(): Promise<SweepResult> { return this.sweeper.sweep() }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
  }

  private expireDue(): Promise<number> { return this.sweeper.expireDue() }

  /** The session as it is now (read under its write lock), expired first when due; the error of an ended one. */
  async liveSession(uploadId: string): Promise<UploadSessionRow> {
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

  async expireIfDue(session: UploadSessionRow): Promise<boolean> {
    const expiry = expiryOf(session, this.times.ages(session), this.config)
    if (!expiry || expiry.inMs > 0) return false
    await this.endAndDelete(session, 'expire', expiry.reason)
    return true
  }

  async endAndDelete(session: UploadSessionRow, event: 'expire' | 'fail', reason: string): Promise<void> {
    if (!(await this.states.end(session.id, event, reason, session.state as UploadState))) return
    this.times.forget(session.id)
    if (event === 'expire') await this.report('upload.expired', { uploadId: session.id, purpose: session.purpose, reason, receivedBytes: session.receivedBytes })
    await this.deleteBytes(session.id)
  }

  /** An event must never turn into the failure of the operation that reports it. */
  async report(kind: 'storage.reserveReached' | 'upload.expired', payload: Record<string, unknown>): Promise<void> {
    await this.options.events?.emit(kind, payload).catch((error: unknown) => this.options.log.error({ err: error, kind }, 'upload event not written'))
  }

  /** Deletes a session's bytes and its store record; idempotent. */
  async deleteBytes(uploadId: string): Promise<void> {
    await this.removeFiles(uploadId)
    await this.repo.markBytesDeleted(uploadId, this.now())
  }

  /** Removes a session that never became visible (its first chunk failed). */
  async forget(uploadId: string): Promise<void> {
    await this.removeFiles(uploadId)
    await this.repo.deleteSession(uploadId)
  }

  /** The bytes, and the tus store's record beside them (`<id>.json`, tus sessions only). */
  private async removeFiles(uploadId: string): Promise<void> {
    this.uploadTemp.forgetFile(uploadId)
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

  /** spec 2.5 / 5.4: a session is visible only to the user who created it; others get "unknown". */
  async ownSession(identity: Identity, uploadId: string, source?: 'uploadTemp' | 'tus'): Promise<UploadSessionRow> {
    const session = await this.repo.find(uploadId)
    if (!session || session.userId !== identity.userId || (source && session.source !== source)) throw notFound(uploadId)
    return session
  }
}
