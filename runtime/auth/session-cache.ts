import type { Db, DbOrTx } from '../db/client.ts'
import type { Clock, Identity } from '../../shared/handler.ts'
import type { SessionService } from '../../shared/auth/session-service.ts'
import { eq } from 'drizzle-orm'
import { sessions } from '../../shared/db/schema/index.ts'
import { monotonicOf } from '../../shared/clock.ts'
import {
  findOpenSession, hashToken, identityOf, issueSession, MAX_TOKEN_LENGTH, revokeSession, revokeUserSessions,
  TOUCH_INTERVAL_MS, type SessionRecord,
} from './sessions.ts'

export interface SessionCacheOptions {
  /** spec 5.3: idle timeout of an mtk (0 = none). */
  idleTimeoutMs: number
  /** How long a resolved session is trusted without reading the database again (0 = no cache). */
  ttlMs: number
  /** At most this many sessions are cached; the least recently used one goes first. */
  maxEntries: number
}

/** Sessions whose last use is anchored on the monotonic clock, at most (the oldest goes first; it is anchored again from its row). */
const MAX_ANCHORS = 10_000

interface Entry {
  record: SessionRecord
  /** When the record was read from the database. */
  readAt: number
}

/**
 * `ctx.sessions` (shared/auth/session-service.ts): resolving an mtk was a libsql join per
 * request (the largest cost of a small authenticated route, bench/http-overhead.bench.ts).
 * Open sessions found in the database are kept here by token hash for `ttlMs`, at most
 * `maxEntries` of them (LRU); unknown tokens are never cached, so guessing fills nothing.
 *
 * Correctness:
 * - Revocations go through this service (Logout, ChangePassword), which drops the affected
 *   entries as soon as the database write is done (after commit, for a transaction).
 * - A lookup that read the database before a revocation could otherwise put a stale entry
 *   back: every revocation bumps `#generation`, and a lookup caches its row only when no
 *   revocation happened while it was reading.
 * - Idle expiry is judged on every request from the record's `lastSeenAt`, which the cache
 *   renews exactly as the database does (written at most every TOUCH_INTERVAL_MS), so an
 *   idle session expires at the same moment with or without the cache.
 * - Idle time runs on the monotonic clock while the process runs (docs/sign-in-and-errors.md
 *   "Sign-in and sessions"): each session is anchored when its lastSeenAt is written here, or,
 *   first met in the database, by the age its row gives then; a wall-clock step neither signs
 *   everyone out (forward) nor keeps an idle session (back).
 * - `ttlMs` bounds how long a change made outside this process (another writer of the same
 *   database) can go unseen.
 */
export class SessionCache implements SessionService {
  readonly #entries = new Map<string, Entry>()
  /** Per session: the lastSeenAt its row holds, and where that lies on the monotonic clock. */
  readonly #seen = new Map<string, { wall: number; mono: number }>()
  readonly #monotonic: () => number
  #generation = 0

  constructor(private readonly db: Db, private readonly clock: Clock, private readonly options: SessionCacheOptions) {
    this.#monotonic = monotonicOf(clock)
  }

  issue(userId: string): Promise<string> {
    return issueSession(this.db, userId, this.clock.now())
  }

  async resolve(token: string | null | undefined): Promise<Identity | null> {
    if (!token || token.length > MAX_TOKEN_LENGTH) return null
    const tokenHash = hashToken(token)
    const now = this.clock.now()
    const record = this.#cached(tokenHash, now) ?? await this.#read(tokenHash, now)
    if (!record) return null
    const idleMs = this.#idleMs(record, now)
    if (this.options.idleTimeoutMs > 0 && idleMs > this.options.idleTimeoutMs) {
      this.#entries.delete(tokenHash)
      this.#seen.delete(record.sessionId)
      return null
    }
    // A use renews lastSeenAt, written at most every TOUCH_INTERVAL_MS (monotonic).
    if (idleMs > TOUCH_INTERVAL_MS) {
      record.lastSeenAt = now
      this.#remember(record.sessionId, { wall: now, mono: this.#monotonic() })
      await this.db.update(sessions).set({ lastSeenAt: now }).where(eq(sessions.id, record.sessionId))
    }
    return identityOf(record)
  }

  /** ms since the session's last use, on the monotonic clock once anchored. */
  #idleMs(record: SessionRecord, wall: number): number {
    const mono = this.#monotonic()
    const anchor = this.#seen.get(record.sessionId)
    if (anchor && anchor.wall === record.lastSeenAt) return mono - anchor.mono
    const age = Math.max(0, wall - record.lastSeenAt)
    this.#remember(record.sessionId, { wall: record.lastSeenAt, mono: mono - age })
    return age
  }

  #remember(sessionId: string, anchor: { wall: number; mono: number }): void {
    this.#seen.delete(sessionId)
    this.#seen.set(sessionId, anchor)
    if (this.#seen.size > MAX_ANCHORS) this.#seen.delete(this.#seen.keys().next().value!)
  }

  async revoke(sessionId: string): Promise<void> {
    await revokeSession(this.db, sessionId, this.clock.now())
    this.#forget((record) => record.sessionId === sessionId)
  }

  async revokeAccount(userId: string, tx: DbOrTx = this.db): Promise<number> {
    const revoked = await revokeUserSessions(tx, userId, this.clock.now())
    this.forgetAccount(userId)
    return revoked
  }

  forgetAccount(userId: string): void {
    this.#forget((record) => record.userId === userId)
  }

  /** Number of cached sessions (tests, diagnostics). */
  get size(): number {
    return this.#entries.size
  }

  #cached(tokenHash: string, now: number): SessionRecord | null {
    const entry = this.#entries.get(tokenHash)
    if (!entry) return null
    this.#entries.delete(tokenHash)
    // A clock that went back also invalidates (readAt in the future).
    if (now - entry.readAt > this.options.ttlMs || now < entry.readAt) return null
    this.#entries.set(tokenHash, entry) // most recently used last
    return entry.record
  }

  async #read(tokenHash: string, now: number): Promise<SessionRecord | null> {
    const generation = this.#generation
    const record = await findOpenSession(this.db, tokenHash)
    if (!record || this.options.ttlMs <= 0 || this.options.maxEntries <= 0) return record
    if (generation !== this.#generation) return record // a revocation raced this read: do not cache
    this.#entries.set(tokenHash, { record, readAt: now })
    while (this.#entries.size > this.options.maxEntries) this.#entries.delete(this.#entries.keys().next().value!)
    return record
  }

  #forget(matches: (record: SessionRecord) => boolean): void {
    this.#generation++
    for (const [tokenHash, entry] of this.#entries) if (matches(entry.record)) this.#entries.delete(tokenHash)
  }
}
