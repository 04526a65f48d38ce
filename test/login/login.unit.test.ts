import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'
import DoLogin from '../../functions/login/DoLogin.ts'
import ChangePassword from '../../functions/login/ChangePassword.ts'
import Logout from '../../functions/login/Logout.ts'
import { scryptSync } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { md5Hex, verifyPasswordDigest } from '../../shared/auth/password.ts'
import { events, users } from '../../shared/db/schema/index.ts'
import type { Identity } from '../../shared/handler.ts'
import { resolveSession } from '../../runtime/auth/sessions.ts'
import { isApiError } from '../../shared/errors/index.ts'

const INITIAL = 'initial-Passw0rd'

async function failureOf(promise: unknown) {
  try {
    await promise
  } catch (error) {
    if (isApiError(error)) return error
    throw error
  }
  throw new Error('expected the handler to fail')
}

describe('DoLogin, ChangePassword, Logout (handlers with a test ctx)', () => {
  let t: TestRuntime
  beforeEach(async () => {
    t = await createTestRuntime({ loginMaxFailures: 3, loginLockMs: 60_000, loginMaxBlockMs: 200_000, sessionIdleTimeoutMs: 600_000 })
  })
  afterEach(async () => t.close())

  const login = (account: string, password: string) => DoLogin.handle({ account, pwd: md5Hex(password) }, t.ctx())
  const identityOf = (mtk: string) => resolveSession(t.runtime.services.db, mtk, t.clock.now(), t.config.sessionIdleTimeoutMs)

  it('signs the default account in with its MD5 digest and requires a password change (spec 2.2, 5.7)', async () => {
    const result = await login('admin', INITIAL)
    expect(result.accountName).toBe('admin')
    expect(result.passwordChangeRequired).toBe(true)
    expect(result.mtk).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const identity = await identityOf(result.mtk)
    expect(identity).toMatchObject({ accountName: 'admin', transport: 'http', passwordChangeRequired: true })
  })

  it('accepts the digest in upper case too', async () => {
    const result = await DoLogin.handle({ account: 'admin', pwd: md5Hex(INITIAL).toUpperCase() }, t.ctx())
    expect(result.accountName).toBe('admin')
  })

  it('answers a wrong password and an unknown account with the same message item', async () => {
    const wrongPassword = await failureOf(login('admin', 'not-it'))
    const unknownAccount = await failureOf(login('nobody', INITIAL))
    expect(wrongPassword.item).toEqual(unknownAccount.item)
    expect(wrongPassword.item.messageKey).toBe('api.error.LoginFailed')
  })

  it('locks an account name for the client after repeated failures, even for the right password, and unlocks after the lock time', async () => {
    for (let i = 0; i < 3; i++) expect((await failureOf(login('admin', 'wrong'))).item.messageKey).toBe('api.error.LoginFailed')
    const locked = await failureOf(login('admin', INITIAL))
    expect(locked.item.messageKey).toBe('api.error.LoginLocked')
    expect(locked.item.retryable).toBe(true)
    expect(locked.item.retryAfterSeconds).toBe(60)
    // unknown accounts lock the same way, so locking reveals nothing
    for (let i = 0; i < 3; i++) await failureOf(login('ghost', 'wrong'))
    expect((await failureOf(login('ghost', 'wrong'))).item.messageKey).toBe('api.error.LoginLocked')

    t.clock.advance(60_001)
    expect((await login('admin', INITIAL)).accountName).toBe('admin')
  })

  describe('sign-in throttle (per account and client address)', () => {
    const from = (clientAddress: string, identity: Identity | null = null) => ({ ...t.ctx(identity), clientAddress })
    const loginFrom = (clientAddress: string, password: string, account = 'admin') =>
      DoLogin.handle({ account, pwd: md5Hex(password) }, from(clientAddress))
    const keyOf = async (promise: unknown) => (await failureOf(promise)).item.messageKey

    it('blocks only the address that failed: the right password from another address signs in meanwhile', async () => {
      for (let i = 0; i < 3; i++) expect(await keyOf(loginFrom('10.0.0.1', 'wrong'))).toBe('api.error.LoginFailed')
      const locked = await failureOf(loginFrom('10.0.0.1', INITIAL))
      expect(locked.item).toMatchObject({ messageKey: 'api.error.LoginLocked', retryable: true, retryAfterSeconds: 60, details: { retryAfterSeconds: 60 }, recommendedAction: 'RETRY_LATER' })
      expect((await loginFrom('10.0.0.2', INITIAL)).accountName).toBe('admin')
      // the other address has a count of its own, and the attacker's block goes on
      for (let i = 0; i < 2; i++) expect(await keyOf(loginFrom('10.0.0.2', 'wrong'))).toBe('api.error.LoginFailed')
      expect((await loginFrom('10.0.0.2', INITIAL)).accountName).toBe('admin')
      expect(await keyOf(loginFrom('10.0.0.1', INITIAL))).toBe('api.error.LoginLocked')
      const [event] = await t.runtime.services.db.select().from(events).where(eq(events.kind, 'login.locked'))
      expect(JSON.parse(event!.payload)).toMatchObject({ accountName: 'admin', clientAddress: '10.0.0.1', failures: 3 })
    })

    it('doubles the block after each further failure, up to LOGIN_MAX_BLOCK_MS, and a right password ends the count', async () => {
      for (let i = 0; i < 3; i++) await failureOf(loginFrom('10.0.0.1', 'wrong'))
      for (const block of [60, 120, 200, 200]) {
        expect((await failureOf(loginFrom('10.0.0.1', INITIAL))).item.retryAfterSeconds).toBe(block)
        t.clock.advance(block * 1000 + 1)
        expect(await keyOf(loginFrom('10.0.0.1', 'wrong'))).toBe('api.error.LoginFailed') // one guess per block
      }
      t.clock.advance(200_001)
      expect((await loginFrom('10.0.0.1', INITIAL)).accountName).toBe('admin')
      for (let i = 0; i < 2; i++) expect(await keyOf(loginFrom('10.0.0.1', 'wrong'))).toBe('api.error.LoginFailed')
    })

    it('evaluates no more guesses of a concurrent burst than the count allows (39 wrong, the right one 38th)', async () => {
      const answers = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => loginFrom('10.0.0.1', i === 37 ? INITIAL : 'wrong')))
      const keys = answers.map((answer) => answer.status === 'fulfilled' ? 'success' : (answer.reason as { item: { messageKey: string } }).item.messageKey)
      expect(keys.filter((key) => key === 'api.error.LoginFailed')).toHaveLength(3)
      expect(keys.filter((key) => key === 'api.error.LoginLocked')).toHaveLength(37)
      expect(keys[37]).toBe('api.error.LoginLocked')
    })

    it('throttles wrong current passwords of ChangePassword with the same counters as sign-in', async () => {
      const identity = (await identityOf((await login('admin', INITIAL)).mtk))!
      const change = (clientAddress: string, oldPassword: string) =>
        ChangePassword.handle({ oldPwd: md5Hex(oldPassword), newPwd: md5Hex('n3w-Password') }, from(clientAddress, identity))
      for (let i = 0; i < 3; i++) {
        const wrong = await failureOf(change('10.0.0.1', `guess-${i}`))
        expect(wrong.item).toMatchObject({ messageKey: 'api.error.LoginFailed', details: { field: 'oldPwd' } })
      }
      expect((await failureOf(change('10.0.0.1', INITIAL))).item).toMatchObject({ messageKey: 'api.error.LoginLocked', retryAfterSeconds: 60 })
      expect(await keyOf(loginFrom('10.0.0.1', INITIAL))).toBe('api.error.LoginLocked')
      expect(await verifyPasswordDigest(md5Hex(INITIAL), (await t.runtime.services.db.select().from(users))[0]!.passwordHash)).toBe(true)
      expect(await change('10.0.0.2', INITIAL)).toEqual({ revokedSessions: 1 })
    })

    it('neither lengthens nor ends a block when the wall clock is stepped', async () => {
      for (let i = 0; i < 3; i++) await failureOf(loginFrom('10.0.0.1', 'wrong'))
      expect((await failureOf(loginFrom('10.0.0.1', INITIAL))).item.retryAfterSeconds).toBe(60)
      t.clock.set(t.clock.now() - 3_600_000) // one hour back
      expect((await failureOf(loginFrom('10.0.0.1', INITIAL))).item.retryAfterSeconds).toBe(60)
      t.clock.advance(30_000)
      expect((await failureOf(loginFrom('10.0.0.1', INITIAL))).item.retryAfterSeconds).toBe(30)
      t.clock.set(t.clock.now() + 7_200_000) // two hours forward
      expect((await failureOf(loginFrom('10.0.0.1', INITIAL))).item.retryAfterSeconds).toBe(30)
      t.clock.advance(30_001)
      expect((await loginFrom('10.0.0.1', INITIAL)).accountName).toBe('admin')
    })
  })

  it('changes the password, clears the pending change and revokes every session of the user (spec 5.5)', async () => {
    const first = await login('admin', INITIAL)
    const second = await login('admin', INITIAL)
    const identity = (await identityOf(first.mtk))!
    const result = await ChangePassword.handle({ oldPwd: md5Hex(INITIAL), newPwd: md5Hex('n3w-Password') }, t.ctx(identity))
    expect(result).toEqual({ revokedSessions: 2 })
    expect(await identityOf(first.mtk)).toBeNull()
    expect(await identityOf(second.mtk)).toBeNull()
    expect((await failureOf(login('admin', INITIAL))).item.messageKey).toBe('api.error.LoginFailed')
    const again = await login('admin', 'n3w-Password')
    expect(again.passwordChangeRequired).toBe(false)
  })

  it('refuses a wrong current password and an unchanged new password, leaving sessions intact', async () => {
    const session = await login('admin', INITIAL)
    const identity = (await identityOf(session.mtk))!
    const wrongOld = await failureOf(ChangePassword.handle({ oldPwd: md5Hex('nope'), newPwd: md5Hex('x-new') }, t.ctx(identity)))
    expect(wrongOld.item).toMatchObject({ messageKey: 'api.error.LoginFailed', details: { field: 'oldPwd' } })
    const same = await failureOf(ChangePassword.handle({ oldPwd: md5Hex(INITIAL), newPwd: md5Hex(INITIAL) }, t.ctx(identity)))
    expect(same.item).toMatchObject({ messageKey: 'api.error.PasswordWeak', details: { field: 'newPwd' } })
    expect(await identityOf(session.mtk)).not.toBeNull()
  })

  it('expires a session that stays idle longer than the idle timeout', async () => {
    const session = await login('admin', INITIAL)
    t.clock.advance(599_000)
    expect(await identityOf(session.mtk)).not.toBeNull()
    t.clock.advance(600_001)
    expect(await identityOf(session.mtk)).toBeNull()
  })

  describe('stored password hashes', () => {
    const stored = async () => (await t.runtime.services.db.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.accountName, 'admin')))[0]!.passwordHash
    const store = (passwordHash: string) => t.runtime.services.db.update(users).set({ passwordHash }).where(eq(users.accountName, 'admin'))
    /** The older form, without parameters: Node's defaults N=16384, r=8, p=1. */
    const legacyHash = (password: string) => {
      const salt = Buffer.alloc(16, 3)
      return `scrypt$${salt.toString('base64')}$${scryptSync(md5Hex(password), salt, 32).toString('base64')}`
    }

    it('records the configured cost in every hash it makes (default account, password change)', async () => {
      expect(await stored()).toMatch(/^scrypt\$N=16384,r=8,p=1\$/)
      const identity = (await identityOf((await login('admin', INITIAL)).mtk))!
      const ctx = { ...t.ctx(identity), config: { ...t.config, passwordScrypt: 'N=32768,r=8,p=1' } }
      await ChangePassword.handle({ oldPwd: md5Hex(INITIAL), newPwd: md5Hex('n3w-Password') }, ctx)
      expect(await stored()).toMatch(/^scrypt\$N=32768,r=8,p=1\$/)
    })

    it('upgrades a hash of the older form at the next successful sign-in, and it still verifies', async () => {
      const legacy = legacyHash(INITIAL)
      await store(legacy)
      expect((await failureOf(login('admin', 'wrong'))).item.messageKey).toBe('api.error.LoginFailed')
      expect(await stored()).toBe(legacy) // a failed sign-in changes nothing
      expect((await login('admin', INITIAL)).accountName).toBe('admin')
      const upgraded = await stored()
      expect(upgraded).toMatch(/^scrypt\$N=16384,r=8,p=1\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/)
      expect(await verifyPasswordDigest(md5Hex(INITIAL), upgraded)).toBe(true)
      expect((await login('admin', INITIAL)).accountName).toBe('admin')
      expect(await stored()).toBe(upgraded) // current already: not made again
    })

    it('re-makes a hash of another cost with the configured one at the next sign-in', async () => {
      const before = await stored()
      const result = await DoLogin.handle({ account: 'admin', pwd: md5Hex(INITIAL) }, { ...t.ctx(), config: { ...t.config, passwordScrypt: 'N=32768,r=8,p=1' } })
      expect(result.accountName).toBe('admin')
      const after = await stored()
      expect(after).not.toBe(before)
      expect(after).toMatch(/^scrypt\$N=32768,r=8,p=1\$/)
      expect(await verifyPasswordDigest(md5Hex(INITIAL), after)).toBe(true)
      // the cost went down again: the recorded parameters still verify, and the hash follows
      expect((await login('admin', INITIAL)).accountName).toBe('admin')
      expect(await stored()).toMatch(/^scrypt\$N=16384,r=8,p=1\$/)
    })

    it('refuses a sign-in against a garbage stored string like a wrong password, and leaves it', async () => {
      for (const garbage of ['', 'not a hash', 'scrypt$N=1048576,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=']) {
        await store(garbage)
        expect((await failureOf(login('admin', INITIAL))).item.messageKey).toBe('api.error.LoginFailed')
        expect(await stored()).toBe(garbage)
      }
    })
  })

  it('signs out by revoking only the presented token', async () => {
    const a = await login('admin', INITIAL)
    const b = await login('admin', INITIAL)
    await Logout.handle({}, t.ctx(await identityOf(a.mtk)))
    expect(await identityOf(a.mtk)).toBeNull()
    expect(await identityOf(b.mtk)).not.toBeNull()
  })
})
