import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { MD5_HEX, scryptCost } from '../../shared/auth/password.ts'
import { authenticate } from '../../shared/auth/accounts.ts'
import { clearFailures, lockedForSeconds, recordFailure } from '../../shared/auth/lockout.ts'

// spec 4.1: account and the 32-hex-character MD5 digest of the password.
const Input = Type.Object({
  account: Type.String({ minLength: 1, maxLength: 128 }),
  pwd: Type.String({ pattern: MD5_HEX.source }),
})

export default defineHandler({
  routes: ['/gtw/cwai/login/DoLogin'],
  auth: 'anonymous',
  body: 'json',
  summary: 'Sign in with account and MD5 password digest; returns the session token mtk (spec 4.1, 2.2).',
  input: Input,
  async handle({ account, pwd }, ctx) {
    const now = ctx.clock.now()
    const lockSeconds = await lockedForSeconds(ctx.db, account, now)
    if (lockSeconds > 0) throw new ApiError('LoginLocked', { retryAfterSeconds: lockSeconds, details: { retryAfterSeconds: lockSeconds } })

    // Unknown account and wrong password are indistinguishable, in answer and in cost.
    const user = await authenticate(ctx.db, account, pwd, scryptCost(ctx.config.passwordScrypt, ctx.config.passwordScryptAllowWeak))
    if (!user) {
      const policy = { maxFailures: ctx.config.loginMaxFailures, lockMs: ctx.config.loginLockMs }
      // The failure count, the lock and its event commit together (outbox, README "Events").
      const locked = await ctx.db.transaction(async (tx) => {
        const locks = await recordFailure(tx, account, now, policy)
        if (locks) await ctx.events.emit('login.locked', { accountName: account, failures: policy.maxFailures, lockedUntil: now + policy.lockMs }, { tx })
        return locks
      })
      if (locked) ctx.log.warn({ event: 'login.locked', account }, 'account locked after repeated failed sign-ins')
      throw new ApiError('LoginFailed')
    }

    await clearFailures(ctx.db, account)
    const mtk = await ctx.sessions.issue(user.id)
    return { accountName: user.accountName, mtk, passwordChangeRequired: user.passwordChangeRequired }
  },
})
