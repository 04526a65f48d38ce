import { randomUUID } from 'node:crypto'
import { and, eq } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { users } from '../db/schema/index.ts'
import { dummyPasswordHash, hashPasswordDigest, md5Hex, needsRehash, verifyPasswordDigest, type ScryptCost } from './password.ts'

export const DEFAULT_ACCOUNT = 'admin'

/** Creates the default account on a new database (spec 5.10: default account policy is the device's). */
export async function ensureDefaultAccount(db: Db, initialPassword: string, changeRequired: boolean, now: number, cost: ScryptCost) {
  const [existing] = await db.select({ id: users.id }).from(users).limit(1)
  if (existing) return
  await db.insert(users).values({
    id: randomUUID(),
    accountName: DEFAULT_ACCOUNT,
    passwordHash: await hashPasswordDigest(md5Hex(initialPassword), cost),
    passwordChangeRequired: changeRequired,
    createdAt: now,
  }).onConflictDoNothing()
}

async function findUserByAccount(db: Db, accountName: string) {
  const [row] = await db.select().from(users).where(eq(users.accountName, accountName)).limit(1)
  return row ?? null
}

/**
 * The sign-in check (spec 4.1): the account when the MD5 digest matches its password, else
 * null. An unknown account costs one hash of the current cost all the same. A matching hash of
 * an older form or cost is replaced by one of `cost`, unless the password changed meanwhile.
 * Until then a wrong password for that account costs the older hash, so its timing can tell
 * that the account exists (docs/sign-in-and-errors.md "Sign-in and sessions"); every guess is throttled all the same.
 */
export async function authenticate(db: Db, accountName: string, md5: string, cost: ScryptCost) {
  const user = await findUserByAccount(db, accountName)
  const valid = await verifyPasswordDigest(md5, user?.passwordHash ?? dummyPasswordHash(cost))
  if (!user || !valid) return null
  if (needsRehash(user.passwordHash, cost)) {
    const passwordHash = await hashPasswordDigest(md5, cost)
    await db.update(users).set({ passwordHash }).where(and(eq(users.id, user.id), eq(users.passwordHash, user.passwordHash)))
  }
  return user
}
