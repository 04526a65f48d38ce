import { Type } from '@sinclair/typebox'
import { eq } from 'drizzle-orm'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { MD5_HEX, hashPasswordDigest, scryptCost, verifyPasswordDigest } from '../../shared/auth/password.ts'
import { users } from '../../shared/db/schema/index.ts'

const Input = Type.Object({
  oldPwd: Type.String({ pattern: MD5_HEX.source }),
  newPwd: Type.String({ pattern: MD5_HEX.source }),
})

export default defineHandler({
  routes: ['/gtw/cwai/login/ChangePassword'],
  // Reachable while a password change is pending: it is how that state ends (spec 5.7).
  auth: 'session-any',
  body: 'json',
  summary: 'Change the signed-in account\'s password (MD5 digests); revokes every session of that account (spec 5.5).',
  input: Input,
  async handle({ oldPwd, newPwd }, ctx) {
    const identity = ctx.identity!
    // The current password is checked under the sign-in throttle, with the same counters: an
    // mtk must not turn this route into an unlimited password oracle.
    const user = await ctx.loginThrottle.attempt(identity.accountName, ctx.clientAddress, async () => {
      const [row] = await ctx.db.select().from(users).where(eq(users.id, identity.userId)).limit(1)
      return row && await verifyPasswordDigest(oldPwd, row.passwordHash) ? row : null
    })
    if (!user) throw new ApiError('LoginFailed', { details: { field: 'oldPwd' }, msgText: 'The current password is wrong.' })
    if (oldPwd.toLowerCase() === newPwd.toLowerCase())
      throw new ApiError('PasswordWeak', { details: { field: 'newPwd', reason: 'must differ from the current password' } })

    const now = ctx.clock.now()
    const passwordHash = await hashPasswordDigest(newPwd, scryptCost(ctx.config.passwordScrypt, ctx.config.passwordScryptAllowWeak))
    // The password, the revocations and the event commit together (outbox, docs/events.md "Events").
    const revokedSessions = await ctx.db.transaction(async (tx) => {
      await tx.update(users)
        .set({ passwordHash, passwordChangeRequired: false, passwordChangedAt: now })
        .where(eq(users.id, user.id))
      const revoked = await ctx.sessions.revokeAccount(user.id, tx)
      await ctx.events.emit('password.changed', { accountName: user.accountName, revokedSessions: revoked }, { tx })
      return revoked
    })
    // Committed: no cached copy of a revoked mtk may outlive it (see SessionService.revokeAccount).
    ctx.sessions.forgetAccount(user.id)
    ctx.log.info({ event: 'password.changed', account: user.accountName, revokedSessions }, 'password changed; sessions revoked')
    return { revokedSessions }
  },
})
