import { randomUUID } from 'node:crypto'
import { and, eq, inArray } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { users } from '../../shared/db/schema/index.ts'
import type { Account, AccountsService } from '../../shared/auth/accounts.ts'
import type { SessionService } from '../../shared/auth/session-service.ts'
import type { EventsService } from '../../shared/events/types.ts'
import { dummyPasswordHash, hashPasswordDigest, md5Hex, needsRehash, verifyPasswordDigest, type ScryptCost } from '../../shared/auth/password.ts'

const DEFAULT_ACCOUNT = 'admin'

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
async function authenticate(db: Db, accountName: string, md5: string, cost: ScryptCost) {
  const user = await findUserByAccount(db, accountName)
  const valid = await verifyPasswordDigest(md5, user?.passwordHash ?? dummyPasswordHash(cost))
  if (!user || !valid) return null
  if (needsRehash(user.passwordHash, cost)) {
    const passwordHash = await hashPasswordDigest(md5, cost)
    await db.update(users).set({ passwordHash }).where(and(eq(users.id, user.id), eq(users.passwordHash, user.passwordHash)))
  }
  return user
}

export interface AccountStoreOptions {
  db: Db
  sessions: SessionService
  events: EventsService
}

/** `ctx.accounts` (shared/auth/accounts.ts): the `users` table. */
export class AccountStore implements AccountsService {
  readonly #o: AccountStoreOptions

  constructor(options: AccountStoreOptions) {
    this.#o = options
  }

  authenticate(accountName: string, md5: string, cost: ScryptCost): Promise<Account | null> {
    return authenticate(this.#o.db, accountName, md5, cost)
  }

  async verify(userId: string, md5: string): Promise<Account | null> {
    const [row] = await this.#o.db.select().from(users).where(eq(users.id, userId)).limit(1)
    return row && await verifyPasswordDigest(md5, row.passwordHash) ? row : null
  }

  async changePassword(account: Account, newMd5: string, cost: ScryptCost, now: number): Promise<number> {
    const passwordHash = await hashPasswordDigest(newMd5, cost)
    // The password, the revocations and the event commit together (outbox, docs/events.md "Events").
    const revokedSessions = await this.#o.db.transaction(async (tx) => {
      await tx.update(users)
        .set({ passwordHash, passwordChangeRequired: false, passwordChangedAt: now })
        .where(eq(users.id, account.id))
      const revoked = await this.#o.sessions.revokeAccount(account.id, tx)
      await this.#o.events.emit('password.changed', { accountName: account.accountName, revokedSessions: revoked }, { tx })
      return revoked
    })
    // Committed: no cached copy of a revoked mtk may outlive it (see SessionService.revokeAccount).
    this.#o.sessions.forgetAccount(account.id)
    return revokedSessions
  }

  async names(userIds: readonly string[]): Promise<Map<string, string>> {
    if (userIds.length === 0) return new Map()
    const rows = await this.#o.db.select({ id: users.id, name: users.accountName }).from(users).where(inArray(users.id, [...userIds]))
    return new Map(rows.map((u) => [u.id, u.name]))
  }
}
