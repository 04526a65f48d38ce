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

  it('delays every check of an account once many addresses together failed, up to the ceiling', async () => {
    const spread = throttle({ accountDelayMaxMs: 600 })
    const timed = async (address: string) => {
      const started = performance.now()
      await spread.attempt('admin', address, wrong)
      return performance.now() - started
    }
    for (let i = 0; i < 20; i++) expect(await timed(`10.0.1.${i}`)).toBeLessThan(250)
    expect(await timed('10.0.2.1')).toBeLessThan(250) // 20 recent failures: still free
    expect(await timed('10.0.2.2')).toBeGreaterThanOrEqual(245) // 21: one step
    expect(await timed('10.0.2.3')).toBeGreaterThanOrEqual(495) // 22: two steps
    expect(await timed('10.0.2.4')).toBeGreaterThanOrEqual(595) // capped at 600 ms
    expect(await timed('10.0.2.5')).toBeLessThan(1000)
    expect(await spread.attempt('other', '10.0.2.6', right)).toBe('ok') // other accounts are not slowed
    t.clock.advance(30 * 60_000) // the failures leak away, one a minute
    expect(await timed('10.0.2.7')).toBeLessThan(250)
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
