import type { ScryptCost } from './password.ts'

/** An account as sign-in sees it (the `users` row). */
export interface Account {
  id: string
  accountName: string
  passwordChangeRequired: boolean
}

/**
 * `ctx.accounts`: the device's accounts and their passwords (spec 4.1, 5.5, 5.7;
 * docs/sign-in-and-errors.md "Sign-in and sessions"). Implemented by runtime/auth/accounts.ts.
 * Password checks are not throttled here: callers run them under `ctx.loginThrottle`.
 */
export interface AccountsService {
  /**
   * The sign-in check: the account when the MD5 digest matches its password, else null. An
   * unknown account costs one hash all the same; a matching hash of an older form or cost is
   * replaced by one of `cost` (PASSWORD_SCRYPT, read by the caller at each request).
   */
  authenticate(accountName: string, md5: string, cost: ScryptCost): Promise<Account | null>
  /** The account with this id when the MD5 digest matches its current password, else null. */
  verify(userId: string, md5: string): Promise<Account | null>
  /**
   * Sets the password (an MD5 digest), ends a pending password change, revokes every session
   * of the account and emits `password.changed`, in one transaction (spec 5.5); returns how
   * many sessions were revoked. The new hash is of `cost`.
   */
  changePassword(account: Account, newMd5: string, cost: ScryptCost, now: number): Promise<number>
  /** The account names of these user ids (ids without an account are left out). */
  names(userIds: readonly string[]): Promise<Map<string, string>>
}
