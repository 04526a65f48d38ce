import { eq } from 'drizzle-orm'
import type { Db, DbOrTx } from '../db/client.ts'
import { loginAttempts } from '../db/schema/index.ts'

export interface LockPolicy {
  maxFailures: number
  lockMs: number
}

/** Seconds until the account may try again, or 0 when it is not locked. */
export async function lockedForSeconds(db: Db, accountName: string, now: number): Promise<number> {
  const [row] = await db.select().from(loginAttempts).where(eq(loginAttempts.accountName, accountName)).limit(1)
  if (!row?.lockedUntil || row.lockedUntil <= now) return 0
  return Math.ceil((row.lockedUntil - now) / 1000)
}

/**
 * Counts a failed sign-in. After `maxFailures` consecutive failures the account name is
 * locked for `lockMs`; the count starts again after the lock. Returns whether this failure
 * locked the account.
 */
export async function recordFailure(db: DbOrTx, accountName: string, now: number, policy: LockPolicy): Promise<boolean> {
  const [row] = await db.select().from(loginAttempts).where(eq(loginAttempts.accountName, accountName)).limit(1)
  const lockExpired = row?.lockedUntil != null && row.lockedUntil <= now
  const failures = (row && !lockExpired ? row.failures : 0) + 1
  const locks = policy.maxFailures > 0 && failures >= policy.maxFailures
  const values = { failures: locks ? 0 : failures, lockedUntil: locks ? now + policy.lockMs : null, lastFailureAt: now }
  await db.insert(loginAttempts).values({ accountName, ...values })
    .onConflictDoUpdate({ target: loginAttempts.accountName, set: values })
  return locks
}

export async function clearFailures(db: Db, accountName: string) {
  await db.delete(loginAttempts).where(eq(loginAttempts.accountName, accountName))
}
