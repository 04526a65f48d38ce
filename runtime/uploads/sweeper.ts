import type { SweepResult } from '../../shared/uploads/index.ts'
import type { SessionCore } from './session-core.ts'

/** What the sweeper needs of the session core. */
export interface SweptCore extends SessionCore {
  start(): Promise<void>
  deleteBytes(uploadId: string): Promise<void>
}

/**
 * Expiry of due sessions (spec 3.1 row 7, judged on the monotonic clock, docs/uploads.md
 * "Expiry and the clock") and deletion of the bytes that ended sessions left behind. Never
 * touches a session being written, nor a claimed file its consumer still holds (`kept`).
 */
export class Sweeper {
  constructor(private readonly core: SweptCore, private readonly kept: ReadonlySet<string>) {}

  /** spec 3.1 "open → expired": expires due sessions, and deletes bytes that released sessions left behind. */
  async sweep(): Promise<SweepResult> {
    const expired = await this.expireDue()
    let deletedFiles = 0
    for (const session of await this.core.repo.endedWithBytes()) {
      // A consumer may still be reading a claimed file; forgotten ones go after the idle timeout (monotonic).
      if (session.state === 'consumed' && (this.kept.has(session.id) || this.core.times.sinceClaimed(session.id, session.endedAt ?? 0) < this.core.config.uploadIdleTimeoutMs)) continue
      if (this.core.locks.get(session.id)) continue
      await this.core.deleteBytes(session.id)
      this.core.times.forget(session.id)
      deletedFiles++
    }
    return { expired, deletedFiles }
  }

  /**
   * Sessions past their idle or absolute deadline, except those being written right now. The
   * candidates: the rows the wall clock says are due (a session not anchored yet) and the
   * anchored sessions the monotonic clock says are due (the wall clock may have been stepped
   * back); each is then judged on the monotonic clock.
   */
  async expireDue(): Promise<number> {
    await this.core.start() // a service used before its start (tests) anchors its sessions first
    const { uploadIdleTimeoutMs: idleMs, uploadAbsoluteTimeoutMs: absoluteMs } = this.core.config
    const candidates = new Map((await this.core.repo.listDue(this.core.clock.now(), idleMs, absoluteMs)).map((session) => [session.id, session]))
    for (const id of this.core.times.due(idleMs, absoluteMs)) {
      if (candidates.has(id)) continue
      const session = await this.core.repo.find(id)
      if (session?.state === 'open' || session?.state === 'complete') candidates.set(id, session)
      else this.core.times.forget(id)
    }
    let count = 0
    for (const session of candidates.values())
      if (!this.core.locks.get(session.id) && (await this.core.expireIfDue(session))) count++
    return count
  }
}
