import { randomBytes, createHash, randomUUID } from 'node:crypto'
import { and, eq, isNull } from 'drizzle-orm'
import type { Db, DbOrTx } from '../db/client.ts'
import { sessions, users } from '../../shared/db/schema/index.ts'
import type { Identity } from '../../shared/handler.ts'

/** The stored form of an mtk: its SHA-256. A token is 256 random bits, so no salt is needed. */
export const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex')

/** Longer values are not tokens of ours: refused without a lookup. */
export const MAX_TOKEN_LENGTH = 512

// lastSeenAt is refreshed at most this often, so that authentication is not a write per request.
export const TOUCH_INTERVAL_MS = 30_000

/** An open (unrevoked) session row joined with its account, as authentication needs it. */
export interface SessionRecord {
  sessionId: string
  userId: string
  accountName: string
  /** Last persisted use; refreshed at most every TOUCH_INTERVAL_MS. */
  lastSeenAt: number
  passwordChangeRequired: boolean
}

export async function issueSession(db: Db, userId: string, now: number): Promise<string> {
  const token = randomBytes(32).toString('base64url')
  await db.insert(sessions).values({ id: randomUUID(), tokenHash: hashToken(token), userId, createdAt: now, lastSeenAt: now })
  return token
}

/** The open session stored under a token hash, or null (unknown or revoked). */
export async function findOpenSession(db: Db, tokenHash: string): Promise<SessionRecord | null> {
  const [row] = await db
    .select({ sessionId: sessions.id, userId: users.id, accountName: users.accountName, lastSeenAt: sessions.lastSeenAt, passwordChangeRequired: users.passwordChangeRequired })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.tokenHash, tokenHash), isNull(sessions.revokedAt)))
    .limit(1)
  return row ?? null
}

/** spec 5.3: a session unused for longer than the idle timeout (0 = none) has expired. */
export const idleExpired = (record: Pick<SessionRecord, 'lastSeenAt'>, now: number, idleTimeoutMs: number) =>
  idleTimeoutMs > 0 && now - record.lastSeenAt > idleTimeoutMs

/** Records a use of the session: writes lastSeenAt when the stored one is older than the touch interval. */
export async function touchSession(db: Db, record: SessionRecord, now: number): Promise<void> {
  if (now - record.lastSeenAt <= TOUCH_INTERVAL_MS) return
  record.lastSeenAt = now
  await db.update(sessions).set({ lastSeenAt: now }).where(eq(sessions.id, record.sessionId))
}

export const identityOf = (record: SessionRecord): Identity => ({
  userId: record.userId, accountName: record.accountName, sessionId: record.sessionId, transport: 'http', passwordChangeRequired: record.passwordChangeRequired,
})

/**
 * Resolves an mtk to an identity straight from the database; null when missing, unknown,
 * revoked or idle for too long (spec 5.3). The runtime resolves through `ctx.sessions`
 * (runtime/auth/session-cache.ts), which caches this.
 */
export async function resolveSession(db: Db, token: string | null | undefined, now: number, idleTimeoutMs: number): Promise<Identity | null> {
  if (!token || token.length > MAX_TOKEN_LENGTH) return null
  const record = await findOpenSession(db, hashToken(token))
  if (!record || idleExpired(record, now, idleTimeoutMs)) return null
  await touchSession(db, record, now)
  return identityOf(record)
}

export async function revokeSession(db: Db, sessionId: string, now: number) {
  await db.update(sessions).set({ revokedAt: now }).where(and(eq(sessions.id, sessionId), isNull(sessions.revokedAt)))
}

/** spec 5.5: a password change revokes every session of that user. Returns how many were open. */
export async function revokeUserSessions(db: DbOrTx, userId: string, now: number): Promise<number> {
  const revoked = await db.update(sessions).set({ revokedAt: now })
    .where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt)))
    .returning({ id: sessions.id })
  return revoked.length
}
