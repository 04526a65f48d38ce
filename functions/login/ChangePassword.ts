import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { MD5_HEX, scryptCost } from '../../shared/auth/password.ts'

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
    const user = await ctx.loginThrottle.attempt(identity.accountName, ctx.clientAddress, () => ctx.accounts.verify(identity.userId, oldPwd))
    if (!user) throw new ApiError('LoginFailed', { details: { field: 'oldPwd' }, msgText: 'The current password is wrong.' })
    if (oldPwd.toLowerCase() === newPwd.toLowerCase())
      throw new ApiError('PasswordWeak', { details: { field: 'newPwd', reason: 'must differ from the current password' } })

    // The password, the revocations and the event commit together; then no cached mtk of the account outlives them.
    const cost = scryptCost(ctx.config.passwordScrypt, ctx.config.passwordScryptAllowWeak)
    const revokedSessions = await ctx.accounts.changePassword(user, newPwd, cost, ctx.clock.now())
    ctx.log.info({ event: 'password.changed', account: user.accountName, revokedSessions }, 'password changed; sessions revoked')
    return { revokedSessions }
  },
})
