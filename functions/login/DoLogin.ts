import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { MD5_HEX, scryptCost } from '../../shared/auth/password.ts'

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
    const cost = scryptCost(ctx.config.passwordScrypt, ctx.config.passwordScryptAllowWeak)
    // Unknown account and wrong password are indistinguishable, in answer, cost and throttle.
    const user = await ctx.loginThrottle.attempt(account, ctx.clientAddress, () => ctx.accounts.authenticate(account, pwd, cost))
    if (!user) throw new ApiError('LoginFailed')
    const mtk = await ctx.sessions.issue(user.id)
    return { accountName: user.accountName, mtk, passwordChangeRequired: user.passwordChangeRequired }
  },
})
