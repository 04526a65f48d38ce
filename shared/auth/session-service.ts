import type { DbOrTx } from '../db/types.ts'
import type { Identity } from '../handler.ts'

/**
 * `ctx.sessions`: sign-in sessions (the `mtk`, spec 5.2-5.5). The runtime's implementation
 * (runtime/auth/session-cache.ts) keeps recently resolved sessions in memory for a short,
 * bounded time; every revocation made through this service takes effect at once, cache
 * included.
 */
export interface SessionService {
  /** Opens a session for the account and returns its token (the only time it exists in clear). */
  issue(userId: string): Promise<string>
  /**
   * The identity an mtk stands for, or null when it is missing, unknown, revoked or idle for
   * longer than SESSION_IDLE_TIMEOUT_MS (spec 5.3). Records the use (bounded writes).
   */
  resolve(token: string | null | undefined): Promise<Identity | null>
  /** Sign-out: revokes one session (spec 4.1 Logout). */
  revoke(sessionId: string): Promise<void>
  /**
   * spec 5.5: revokes every open session of the account and returns how many there were.
   * With `tx`, the revocation commits with that transaction: call `forgetAccount` once it has
   * committed, so that a lookup racing the commit cannot leave a stale entry behind.
   */
  revokeAccount(userId: string, tx?: DbOrTx): Promise<number>
  /** Drops every cached session of the account (the database is the truth again). */
  forgetAccount(userId: string): void
}
