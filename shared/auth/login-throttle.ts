/**
 * `ctx.loginThrottle`: the sign-in throttle every password check goes through (DoLogin and
 * ChangePassword, same counters). The runtime's implementation is runtime/auth/login-throttle.ts;
 * docs/sign-in-and-errors.md "Sign-in and sessions" states the policy.
 */
export interface LoginThrottle {
  /**
   * Runs one password check of `account` for the client at `clientAddress`. Checks of one account
   * run one at a time. Throws LoginLocked (with retryAfterSeconds) when that client is blocked for
   * the account, without running `check`, and LoginBusy (with retryAfterSeconds) at once, instead
   * of holding the request, when the account's checks are spaced apart after many failures and
   * this one comes too early, or when its wait for its turn would be long.
   * `check` resolves to its result when the password is right and to null when it is wrong: a
   * wrong one counts against the client (and slows the account a little for everyone), a right
   * one clears the client's count. Resolves to what `check` resolved to.
   */
  attempt<T>(account: string, clientAddress: string | null, check: () => Promise<T | null>): Promise<T | null>
}
