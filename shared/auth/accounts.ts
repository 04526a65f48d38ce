import { randomUUID } from 'node:crypto'
import { eq } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { users } from '../db/schema/index.ts'
import { hashPasswordDigest, md5Hex } from './password.ts'

export const DEFAULT_ACCOUNT = 'admin'

/** Creates the default account on a new database (spec 5.10: default account policy is the device's). */
export async function ensureDefaultAccount(db: Db, initialPassword: string, changeRequired: boolean, now: number) {
  const [existing] = await db.select({ id: users.id }).from(users).limit(1)
  if (existing) return
  await db.insert(users).values({
    id: randomUUID(),
    accountName: DEFAULT_ACCOUNT,
    passwordHash: await hashPasswordDigest(md5Hex(initialPassword)),
    passwordChangeRequired: changeRequired,
    createdAt: now,
  }).onConflictDoNothing()
}

export async function findUserByAccount(db: Db, accountName: string) {
  const [row] = await db.select().from(users).where(eq(users.accountName, accountName)).limit(1)
  return row ?? null
}
