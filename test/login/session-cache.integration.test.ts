import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { eq } from 'drizzle-orm'
import { md5Hex } from '../../shared/auth/password.ts'
import { hashToken, revokeSession } from '../../runtime/auth/sessions.ts'
import { sessions, users } from '../../shared/db/schema/index.ts'
import type { SessionCache } from '../../runtime/auth/session-cache.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { CHANGED_PASSWORD, type DeviceProcess } from '../helpers/device.ts'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'

const HOUR = 3_600_000

// The cache lives for an hour here: a token refused below is refused because the revocation
// reached the cache, not because its entry aged out.
test.override('deviceOptions', { env: { SESSION_CACHE_TTL_MS: String(HOUR) } })

test.describe('session cache over HTTP: revocations apply at once (spec 4.1 Logout, 5.5)', () => {
  let device: DeviceProcess
  test.beforeAll(async ({ device: started }) => {
    device = started
  })

  const signIn = async (password: string) => {
    const login = await device.post('/gtw/cwai/login/DoLogin', { account: 'admin', pwd: md5Hex(password) })
    expect(login.body.resCode).toBe(1)
    return login.body.resData.mtk as string
  }
  const statusWith = async (mtk: string) => {
    const answer = await device.post('/v1/cwai/aihost/ViewRoutes', {}, mtk)
    return { status: answer.status, messageKey: answer.body.resCode === 1 ? null : answer.body.resMsg[0].messageKey }
  }
  const ok = { status: 200, messageKey: null }
  const refused = { status: 401, messageKey: 'api.error.Unauthorized' }

  test('refuses a signed-out mtk on the next request, and only that one', async () => {
    await device.adminToken()
    const [signedOut, other] = [await signIn(CHANGED_PASSWORD), await signIn(CHANGED_PASSWORD)]
    // Used twice each, so both are cached.
    for (let i = 0; i < 2; i++) {
      expect(await statusWith(signedOut)).toEqual(ok)
      expect(await statusWith(other)).toEqual(ok)
    }
    const logout = await device.post('/gtw/cwai/login/Logout', {}, signedOut)
    expect(logout.body.resCode).toBe(1)
    expect(await statusWith(signedOut)).toEqual(refused)
    expect((await device.post('/gtw/cwai/login/Logout', {}, signedOut)).status).toBe(401)
    expect(await statusWith(other)).toEqual(ok)
  })

  test('refuses every cached mtk of the account right after ChangePassword, and the new password signs in', async () => {
    const tokens = [await signIn(CHANGED_PASSWORD), await signIn(CHANGED_PASSWORD), await signIn(CHANGED_PASSWORD)]
    for (const mtk of tokens) expect(await statusWith(mtk)).toEqual(ok)
    const change = await device.post('/gtw/cwai/login/ChangePassword', { oldPwd: md5Hex(CHANGED_PASSWORD), newPwd: md5Hex('third-Passw0rd') }, tokens[0])
    expect(change.body).toMatchObject({ resCode: 1 })
    expect(change.body.resData.revokedSessions).toBeGreaterThanOrEqual(tokens.length)
    for (const mtk of tokens) expect(await statusWith(mtk)).toEqual(refused)
    expect(await statusWith(await signIn('third-Passw0rd'))).toEqual(ok)
  })
})

// In process, without the device.
describe('SessionCache (ctx.sessions on the real services and libsql)', () => {
  let t: TestRuntime
  let cache: SessionCache
  const IDLE = 60_000
  const TTL = 10_000
  beforeEach(async () => {
    t = await createTestRuntime({ sessionIdleTimeoutMs: IDLE, sessionCacheTtlMs: TTL, sessionCacheMaxEntries: 2 })
    cache = t.runtime.services.sessions as SessionCache
  })
  afterEach(async () => t.close())

  const adminId = async () => (await t.runtime.services.db.select({ id: users.id }).from(users).where(eq(users.accountName, 'admin')))[0]!.id
  const storedLastSeen = async (mtk: string) =>
    (await t.runtime.services.db.select({ lastSeenAt: sessions.lastSeenAt }).from(sessions).where(eq(sessions.tokenHash, hashToken(mtk))))[0]!.lastSeenAt

  it('serves a resolved session from memory until its TTL, then reads the database again', async () => {
    const mtk = await cache.issue(await adminId())
    const identity = await cache.resolve(mtk)
    expect(identity).toMatchObject({ accountName: 'admin', transport: 'http' })
    // Revoked behind the service's back (another writer): the cache still answers for its TTL…
    await revokeSession(t.runtime.services.db, identity!.sessionId!, t.clock.now())
    t.clock.advance(TTL)
    expect(await cache.resolve(mtk)).toMatchObject({ sessionId: identity!.sessionId })
    // …and no longer once the TTL has passed.
    t.clock.advance(1)
    expect(await cache.resolve(mtk)).toBeNull()
  })

  it('keeps at most maxEntries sessions and never caches unknown tokens', async () => {
    const userId = await adminId()
    const tokens = [await cache.issue(userId), await cache.issue(userId), await cache.issue(userId)]
    for (const mtk of tokens) expect(await cache.resolve(mtk)).not.toBeNull()
    expect(cache.size).toBe(2)
    expect(await cache.resolve('not-a-token')).toBeNull()
    expect(await cache.resolve('x'.repeat(513))).toBeNull()
    expect(cache.size).toBe(2)
  })

  it('a revocation racing a database read leaves no stale entry', async () => {
    const userId = await adminId()
    const mtk = await cache.issue(userId)
    const identity = (await cache.resolve(mtk))!
    cache.forgetAccount(userId)
    // The read and the revocation interleave on the same event loop.
    const [raced] = await Promise.all([cache.resolve(mtk), cache.revoke(identity.sessionId!)])
    expect(raced === null || raced.sessionId === identity.sessionId).toBe(true)
    expect(await cache.resolve(mtk)).toBeNull()
  })

  it('revokeAccount refuses every session of the account at once', async () => {
    const userId = await adminId()
    const tokens = [await cache.issue(userId), await cache.issue(userId)]
    for (const mtk of tokens) expect(await cache.resolve(mtk)).not.toBeNull()
    expect(await cache.revokeAccount(userId)).toBe(2)
    for (const mtk of tokens) expect(await cache.resolve(mtk)).toBeNull()
  })

  // Idle expiry (spec 5.3) and the bounded "last seen" writes behave the same with the cache
  // off (TTL 0) and on.
  it.each([0, HOUR])('idle expiry and lastSeenAt renewal with cache TTL %i ms', async (ttlMs) => {
    await t.close()
    t = await createTestRuntime({ sessionIdleTimeoutMs: IDLE, sessionCacheTtlMs: ttlMs })
    const service = t.runtime.services.sessions
    const issuedAt = t.clock.now()
    const mtk = await service.issue(await adminId())
    t.clock.advance(20_000)
    expect(await service.resolve(mtk)).not.toBeNull()
    expect(await storedLastSeen(mtk)).toBe(issuedAt) // within the touch interval: no write
    t.clock.advance(20_000)
    expect(await service.resolve(mtk)).not.toBeNull()
    expect(await storedLastSeen(mtk)).toBe(issuedAt + 40_000) // renewed
    t.clock.advance(IDLE)
    expect(await service.resolve(mtk)).not.toBeNull() // exactly the idle timeout: still valid
    expect(await storedLastSeen(mtk)).toBe(issuedAt + 40_000 + IDLE)
    t.clock.advance(IDLE + 1)
    expect(await service.resolve(mtk)).toBeNull()
  })
})
