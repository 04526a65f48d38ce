import { randomBytes } from 'node:crypto'
import type { Config } from '../../shared/config.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { Clock, Identity } from '../../shared/handler.ts'
import { Mutex } from '../keyed-mutex.ts'
import type { UploadCapabilities } from '../../shared/uploads/index.ts'
import { capacityOf, type Capacity, type StatDisk } from './capacity.ts'
import type { UploadRepository, UploadSessionRow } from './repository.ts'
import type { SessionStates } from './session-states.ts'
import type { SessionTimes } from './session-times.ts'

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

export interface AdmissionDeps {
  config: Config
  clock: Clock
  repo: UploadRepository
  states: SessionStates
  times: SessionTimes
  stagingDir: string
  statDisk: StatDisk
  /** Expires due sessions (their reservations released); the number expired. */
  expireDue(): Promise<number>
  report(kind: 'storage.reserveReached', payload: Record<string, unknown>): Promise<void>
}

/**
 * Admission of new sessions (spec 2.5, 3.1 row 1), one at a time: the whole file must fit in
 * availableForNewUploadsBytes, else STORAGE_RESERVE_REACHED (spec 7.1, 8). Both protocols
 * admit here, under the same lock, so their reservations never overbook the disk.
 */
export class Admission {
  readonly #lock = new Mutex()

  constructor(private readonly deps: AdmissionDeps) {}

  /** Runs `step` alone among admissions (a resume lookup and an admission form one step). */
  exclusive<T>(step: () => Promise<T>): Promise<T> {
    return this.#lock.run(step)
  }

  /** What new uploads may take now, due sessions expired first (their reservations released). */
  async capacity(): Promise<Capacity> {
    await this.deps.expireDue()
    return this.measure()
  }

  private async measure(): Promise<Capacity> {
    const [disk, { reservedBytes }] = await Promise.all([this.deps.statDisk(this.deps.stagingDir), this.deps.repo.reservations()])
    return capacityOf(disk, reservedBytes, this.deps.config)
  }

  async capabilities(): Promise<UploadCapabilities> {
    const capacity = await this.capacity()
    const { activeSessions } = await this.deps.repo.reservations()
    const c = this.deps.config
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

  /** Admission (call inside `exclusive`): reserves the whole file by inserting the open manifest. */
  async admit(identity: Identity, spec: NewSession, uploadId = randomBytes(16).toString('hex')): Promise<UploadSessionRow> {
    // Due sessions are expired here only when the upload would not fit without their
    // reservations; the sweeper expires them anyway, so an upload that fits costs no search.
    let capacity = await this.measure()
    if (spec.totalSize > capacity.availableForNewUploadsBytes && (await this.deps.expireDue()) > 0) capacity = await this.measure()
    if (spec.totalSize > capacity.availableForNewUploadsBytes) {
      await this.deps.report('storage.reserveReached', {
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
    const now = this.deps.clock.now()
    const row = await this.deps.states.admit({
      id: uploadId, userId: identity.userId, source: spec.source, clientRequestId: spec.clientRequestId ?? null,
      filenameJson: JSON.stringify(spec.filename), purpose: spec.purpose, totalChunks: spec.totalChunks,
      totalSize: spec.totalSize, sha256: spec.sha256 ?? null, nextChunkIndex: 0, receivedBytes: 0,
      metadataBytes: spec.metadataBytes, createdAt: now, lastActivityAt: now, endedAt: null, endReason: null, bytesDeletedAt: null,
    })
    this.deps.times.touched(uploadId, now, true)
    return row
  }
}
