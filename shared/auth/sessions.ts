import { randomBytes, createHash, randomUUID } from 'node:crypto'
import { and, eq, isNull } from 'drizzle-orm'
import type { Db, DbOrTx } from '../db/client.ts'
import { sessions, users } from '../db/schema/index.ts'
import type { Identity } from '../handler.ts'

/** The stored form of an mtk: its SHA-256. A token is 256 random bits, so no salt is needed. */
export const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex')

// lastSeenAt is refreshed at most this often, so that authentication is not a write per request.
const TOUCH_INTERVAL_MS = 30_000

export async function issueSession(db: Db, userId: string, now: number): Promise<string> {
  const token = randomBytes(32).toString('base64url')
  await db.insert(sessions).values({ id: randomUUID(), tokenHash: hashToken(token), userId, createdAt: now, lastSeenAt: now })
  return token
}

/** Resolves an mtk to an identity; null when missing, unknown, revoked or idle for too long (spec 5.3). */
export async function resolveSession(db: Db, token: string | null | undefined, now: number, idleTimeoutMs: number): Promise<Identity | null> {
  if (!token || token.length > 512) return null
  const [row] = await db
    .select({ sessionId: sessions.id, userId: users.id, accountName: users.accountName, lastSeenAt: sessions.lastSeenAt, passwordChangeRequired: users.passwordChangeRequired })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.tokenHash, hashToken(token)), isNull(sessions.revokedAt)))
    .limit(1)
  if (!row) return null
  if (idleTimeoutMs > 0 && now - row.lastSeenAt > idleTimeoutMs) return null
  if (now - row.lastSeenAt > TOUCH_INTERVAL_MS) await db.update(sessions).set({ lastSeenAt: now }).where(eq(sessions.id, row.sessionId))
  return { userId: row.userId, accountName: row.accountName, sessionId: row.sessionId, transport: 'http', passwordChangeRequired: row.passwordChangeRequired }
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
