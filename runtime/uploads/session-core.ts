import type { Clock, Identity } from '../../shared/handler.ts'
import type { Config } from '../../shared/config.ts'
import type { UploadProtocol } from '../metrics/index.ts'
import type { Admission } from './admission.ts'
import type { SessionWrite, SessionWriteLocks } from './locks.ts'
import type { UploadRepository, UploadSessionRow } from './repository.ts'
import type { SessionFileStore } from './session-store.ts'
import type { SessionStates } from './session-states.ts'
import type { SessionTimes } from './session-times.ts'

/**
 * The upload session core (spec 3.1) as its two protocol adapters see it: `uploadTemp`
 * (upload-temp.ts) and tus (tus-sessions.ts) each drive sessions through this, as
 * `@tus/server` gives each verb its own handler around one DataStore. Implemented by
 * UploadManager (service.ts); every state change goes through `states` (the transition table).
 */
export interface SessionCore {
  readonly config: Config
  readonly clock: Clock
  readonly repo: UploadRepository
  readonly states: SessionStates
  readonly times: SessionTimes
  readonly store: SessionFileStore
  readonly locks: SessionWriteLocks
  readonly admission: Admission
  filePath(uploadId: string): string
  /** The caller's session (of one protocol when given); UPLOAD_NOT_FOUND for anyone else's (spec 5.4). */
  ownSession(identity: Identity, uploadId: string, source?: 'uploadTemp' | 'tus'): Promise<UploadSessionRow>
  /** The caller's live session of one protocol, expired first when due; the error to answer otherwise. */
  ownLiveSession(identity: Identity, uploadId: string, source: 'uploadTemp' | 'tus'): Promise<UploadSessionRow>
  /** The session as it is now (read under its write lock), expired first when due; the error of an ended one. */
  liveSession(uploadId: string): Promise<UploadSessionRow>
  /** Expires the session when it is due (spec 3.1 row 7); true when it did. */
  expireIfDue(session: UploadSessionRow): Promise<boolean>
  /** Ends a session the caller judged in its current state, and deletes its bytes. */
  endAndDelete(session: UploadSessionRow, event: 'expire' | 'fail', reason: string): Promise<void>
  /** Opens a write on a live session under its write lock. */
  openWrite(uploadId: string): Promise<SessionWrite>
  /** When sha256 was given, the completed file must match it; else the session fails (UPLOAD_CHECKSUM_MISMATCH). */
  verifySha256(session: UploadSessionRow): Promise<void>
  /** Removes a session that never became visible (its first chunk failed). */
  forget(uploadId: string): Promise<void>
  /** Metrics (docs/metrics.md "Metrics"). */
  received(protocol: UploadProtocol, bytes: number): void
  refused(protocol: UploadProtocol, error: unknown): void
}
