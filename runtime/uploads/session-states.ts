import type { Clock } from '../../shared/handler.ts'
import type { UploadState } from '../../shared/uploads/index.ts'
import type { UploadRepository, UploadSessionRow } from './repository.ts'
import { fromStates, nextUploadState, UPLOAD_TRANSITIONS, type UploadEvent } from './transitions.ts'

/**
 * The only writer of an upload session's state (spec 3.1): each method is one event of the
 * transition table (transitions.ts), written as an update guarded by the states the event may
 * start from, so a session that moved meanwhile (a concurrent cancel, claim or expiry) is
 * left alone and the method answers false.
 */
export class SessionStates {
  constructor(private readonly repo: UploadRepository, private readonly clock: Clock) {}

  /** spec 3.1 row 1: the new session's manifest, in the state admission leads to. */
  async admit(row: Omit<UploadSessionRow, 'state'>): Promise<UploadSessionRow> {
    const session = { ...row, state: nextUploadState('none', 'admit', row.id) }
    await this.repo.insert(session)
    return session
  }

  /** spec 3.1 rows 3–4: an uploadTemp chunk accepted at the session's position; the last one completes it. */
  commitChunk(session: UploadSessionRow, size: number, now: number): Promise<boolean> {
    const event = session.nextChunkIndex + 1 === session.totalChunks ? 'lastChunk' : 'chunk'
    return this.repo.commitChunk(session, size, now, nextUploadState(session.state as UploadState, event, session.id))
  }

  /** spec 3.1 rows 3–4 for tus: the store's offset mirrored; the whole file completes it. */
  async tusProgress(session: UploadSessionRow, offset: number, now: number): Promise<void> {
    const event = offset === session.totalSize ? 'lastChunk' : 'chunk'
    await this.repo.recordTusProgress(session.id, offset, nextUploadState(session.state as UploadState, event, session.id), now)
  }

  /**
   * An event that ends a session (claim, cancel, expire, fail). `onlyFrom`: the state the caller
   * judged the session in (an expiry or failure is judged on one state; it must still hold).
   */
  end(uploadId: string, event: Extract<UploadEvent, 'claim' | 'cancel' | 'expire' | 'fail'>, reason: string, onlyFrom?: UploadState): Promise<boolean> {
    const from = onlyFrom === undefined ? fromStates(event) : [onlyFrom]
    // Every start state must be one the table allows: an illegal move is a programming error.
    const to = new Set(from.map((state) => nextUploadState(state, event, uploadId)))
    if (to.size !== 1) throw new Error(`upload event ${event} leads to several states`)
    return this.repo.end(uploadId, from, [...to][0]!, this.clock.now(), reason)
  }

  /** spec 4.7: a lease whose consumer failed puts the session back (its bytes still there). */
  unclaim(uploadId: string): Promise<boolean> {
    const from = fromStates('unclaim')
    return this.repo.unclaim(uploadId, from, UPLOAD_TRANSITIONS.unclaim[from[0]!]!)
  }
}
