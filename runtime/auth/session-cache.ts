import type { Db, DbOrTx } from '../../shared/db/client.ts'
import type { Clock, Identity } from '../../shared/handler.ts'
import type { SessionService } from '../../shared/auth/session-service.ts'
import {
  findOpenSession, hashToken, identityOf, idleExpired, issueSession, MAX_TOKEN_LENGTH, revokeSession, revokeUserSessions,
  touchSession, type SessionRecord,
} from './sessions.ts'

export interface SessionCacheOptions {
  /** spec 5.3: idle timeout of an mtk (0 = none). */
  idleTimeoutMs: number
  /** How long a resolved session is trusted without reading the database again (0 = no cache). */
  ttlMs: number
  /** At most this many sessions are cached; the least recently used one goes first. */
  maxEntries: number
}

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
 * - `ttlMs` bounds how long a change made outside this process (another writer of the same
 *   database) can go unseen.
 */
export class SessionCache implements SessionService {
  readonly #entries = new Map<string, Entry>()
  #generation = 0

  constructor(private readonly db: Db, private readonly clock: Clock, private readonly options: SessionCacheOptions) {}

  issue(userId: string): Promise<string> {
    return issueSession(this.db, userId, this.clock.now())
  }

  async resolve(token: string | null | undefined): Promise<Identity | null> {
    if (!token || token.length > MAX_TOKEN_LENGTH) return null
    const tokenHash = hashToken(token)
    const now = this.clock.now()
    const record = this.#cached(tokenHash, now) ?? await this.#read(tokenHash, now)
    if (!record) return null
    if (idleExpired(record, now, this.options.idleTimeoutMs)) {
      this.#entries.delete(tokenHash)
      return null
    }
    await touchSession(this.db, record, now)
    return identityOf(record)
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
