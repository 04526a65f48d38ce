import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'
import { MAX_WAITING_PER_ACCOUNT, RuntimeLoginThrottle, clientKey, type ThrottlePolicy } from '../../runtime/auth/login-throttle.ts'
import { isApiError } from '../../shared/errors/index.ts'

async function failureOf(promise: Promise<unknown>) {
  try {
    await promise
  } catch (error) {
    if (isApiError(error)) return error.item
    throw error
  }
  throw new Error('expected a failure')
}

/** A promise and the function that settles it. */
function gate() {
  let open!: () => void
  const opened = new Promise<void>((resolve) => { open = resolve })
  return { opened, open }
}

describe('sign-in throttle (runtime/auth/login-throttle.ts)', () => {
  let t: TestRuntime
  const policy: ThrottlePolicy = { maxFailures: 3, blockMs: 60_000, maxBlockMs: 3_600_000, accountDelayMaxMs: 2000 }
  const throttle = (overrides: Partial<ThrottlePolicy> = {}) => new RuntimeLoginThrottle({
    db: t.runtime.services.db, clock: t.clock, events: t.runtime.services.events, log: t.runtime.services.log, policy: { ...policy, ...overrides },
  })
  const wrong = () => Promise.resolve(null)
  const right = () => Promise.resolve('ok')

  beforeEach(async () => { t = await createTestRuntime() })
  afterEach(async () => t.close())

  it('counts clients by address: IPv4-mapped as IPv4, IPv6 by its /64, unknown as one', () => {
    expect(clientKey('127.0.0.2')).toBe('127.0.0.2')
    expect(clientKey('::ffff:127.0.0.2')).toBe('127.0.0.2')
    expect(clientKey('2001:db8:a:b:1:2:3:4')).toBe('2001:db8:a:b::/64')
    expect(clientKey('2001:db8:a:b::9')).toBe('2001:db8:a:b::/64')
    expect(clientKey('2001:0db8::1%eth0')).toBe('2001:db8:0:0::/64')
    expect(clientKey('::1')).toBe('0:0:0:0::/64')
    expect(clientKey(null)).toBe('-')
  })

  it('keeps counts and blocks over a restart, and reads a stored block as at most its length after the clock went back', async () => {
    const first = throttle()
    for (let i = 0; i < 3; i++) expect(await first.attempt('admin', '10.0.0.1', wrong)).toBeNull()
    expect((await failureOf(first.attempt('admin', '10.0.0.1', right))).retryAfterSeconds).toBe(60)
    t.clock.set(t.clock.now() - 3_600_000) // the clock went back an hour while the device was down
    const restarted = throttle()
    expect((await failureOf(restarted.attempt('admin', '10.0.0.1', right))).retryAfterSeconds).toBe(60)
    expect(await restarted.attempt('admin', '10.0.0.2', right)).toBe('ok')
    t.clock.advance(60_001)
    expect(await restarted.attempt('admin', '10.0.0.1', wrong)).toBeNull()
    // the count survived too: that fourth failure blocks for twice as long
    expect((await failureOf(throttle().attempt('admin', '10.0.0.1', right))).retryAfterSeconds).toBe(120)
  })

  it('spaces the checks of an account once many addresses together failed, refusing an early one at once (LoginBusy with the time left), up to the ceiling', async () => {
    const spread = throttle({ accountDelayMaxMs: 600 })
    // The test clock stands still unless advanced: the levels below are exact.
    for (let i = 0; i < 21; i++) expect(await spread.attempt('admin', `10.0.1.${i}`, wrong)).toBeNull()
    // 21 recent failures: one step (250 ms) between checks. The next one comes at once: refused, not held.
    const started = performance.now()
    const early = await failureOf(spread.attempt('admin', '10.0.2.1', right))
    expect(performance.now() - started).toBeLessThan(100)
    expect(early).toMatchObject({ messageKey: 'api.error.LoginBusy', retryable: true, retryAfterSeconds: 1, details: { retryAfterSeconds: 1 }, recommendedAction: 'RETRY_LATER' })
    t.clock.advance(260) // one failure leaked a little: 20.99, under the free 21
    expect(await spread.attempt('admin', '10.0.2.1', wrong)).toBeNull()
    for (let i = 0; i < 10; i++) {
      t.clock.advance(600)
      expect(await spread.attempt('admin', `10.0.3.${i}`, wrong)).toBeNull()
    }
    // About 31 failures: 11 steps, capped at 600 ms.
    t.clock.advance(590)
    expect(await failureOf(spread.attempt('admin', '10.0.2.2', right))).toMatchObject({ messageKey: 'api.error.LoginBusy', retryAfterSeconds: 1 })
    t.clock.advance(10)
    expect(await spread.attempt('admin', '10.0.2.2', right)).toBe('ok')
    expect(await spread.attempt('other', '10.0.2.6', right)).toBe('ok') // other accounts are not spaced
    t.clock.advance(30 * 60_000) // the failures leak away, one a minute
    expect(await spread.attempt('admin', '10.0.2.7', wrong)).toBeNull()
    expect(await spread.attempt('admin', '10.0.2.8', right)).toBe('ok')
  })

  it('refuses at once (LoginBusy with the expected wait) a check that would wait over two seconds for its turn', async () => {
    const serial = throttle({ maxFailures: 0, accountDelayMaxMs: 0 })
    // Checks of about a second each (on the test clock): the moving average learns it.
    const slow = async () => { t.clock.advance(1000); return 'ok' }
    for (let i = 0; i < 12; i++) expect(await serial.attempt('admin', '10.0.4.1', slow)).toBe('ok')
    const release = gate()
    const held = async () => { await release.opened; return 'ok' }
    const admitted = [serial.attempt('admin', '10.0.4.2', held), serial.attempt('admin', '10.0.4.3', held), serial.attempt('admin', '10.0.4.4', held)]
    await new Promise((resolve) => setTimeout(resolve, 100)) // three waiting, ~1 s each: a fourth would wait ~3 s
    const refused = await failureOf(serial.attempt('admin', '10.0.4.5', right))
    expect(refused).toMatchObject({ messageKey: 'api.error.LoginBusy', retryable: true, retryAfterSeconds: 3, details: { retryAfterSeconds: 3 } })
    release.open()
    expect(await Promise.all(admitted)).toEqual(['ok', 'ok', 'ok'])
  })

  it('runs the checks of one account one at a time and refuses (LoginBusy) when too many wait', async () => {
    const serial = throttle({ maxFailures: 0, accountDelayMaxMs: 0 })
    const release = gate()
    let running = 0
    let most = 0
    const check = async () => {
      running++
      most = Math.max(most, running)
      await release.opened
      running--
      return null
    }
    const waiting = Array.from({ length: MAX_WAITING_PER_ACCOUNT }, (_, i) => serial.attempt('admin', `10.0.${3 + (i >> 8)}.${i & 255}`, check))
    await new Promise((resolve) => setTimeout(resolve, 200)) // all have read their clients and queued
    expect(await failureOf(serial.attempt('admin', '10.1.0.1', right))).toMatchObject({ messageKey: 'api.error.LoginBusy', retryable: true, retryAfterSeconds: 1 })
    expect(await serial.attempt('other', '10.1.0.1', right)).toBe('ok')
    release.open()
    expect(await Promise.all(waiting)).toEqual(Array(MAX_WAITING_PER_ACCOUNT).fill(null))
    expect(most).toBe(1)
    expect(await serial.attempt('admin', '10.1.0.1', right)).toBe('ok')
  })
})
