import { request } from 'node:http'
import { expect } from 'vitest'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { CHANGED_PASSWORD, INITIAL_PASSWORD, type DeviceProcess } from '../helpers/device.ts'
import { md5Hex } from '../../shared/auth/password.ts'

/** POST JSON from a chosen local address (any 127/8 address is loopback), on its own connection. */
function postFrom(device: DeviceProcess, localAddress: string, route: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const data = JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1', port: device.port, path: route, method: 'POST', localAddress, agent: false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...headers },
    }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => { text += chunk })
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }))
    })
    req.on('error', reject)
    req.end(data)
  })
}

const signIn = (device: DeviceProcess, from: string, password: string, headers: Record<string, string> = {}) =>
  postFrom(device, from, '/gtw/cwai/login/DoLogin', { account: 'admin', pwd: md5Hex(password) }, headers)
const keyOf = (answer: { body: any }) => answer.body.resCode === 1 ? 'success' : answer.body.resMsg[0].messageKey

// The tests sign in themselves (from chosen addresses), so not through the fixture's `mtk`.
test.override('deviceOptions', { env: { LOGIN_MAX_FAILURES: '5', LOGIN_LOCK_MS: '300000' } })

test.describe('sign-in throttle over HTTP (client address from the connection)', () => {
  test('evaluates five guesses of a burst of forty from one address, refuses the rest, and lets another address sign in', async ({ device }) => {
    const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => signIn(device, '127.0.0.2', i === 37 ? INITIAL_PASSWORD : `wrong-${i}`)))
    const keys = burst.map(keyOf)
    expect(keys.filter((key) => key === 'api.error.LoginFailed')).toHaveLength(5)
    expect(keys.filter((key) => key === 'api.error.LoginLocked')).toHaveLength(35)
    expect(keys[37]).toBe('api.error.LoginLocked')
    for (const answer of burst.filter((a) => keyOf(a) === 'api.error.LoginLocked')) {
      expect(answer.status).toBe(200)
      expect(answer.body.resMsg[0]).toMatchObject({ retryable: true, recommendedAction: 'RETRY_LATER' })
      expect(answer.body.resMsg[0].retryAfterSeconds).toBeGreaterThan(290)
      expect(answer.body.resMsg[0].retryAfterSeconds).toBeLessThanOrEqual(300)
      expect(answer.body.resMsg[0].details.retryAfterSeconds).toBe(answer.body.resMsg[0].retryAfterSeconds)
    }

    // The attack goes on from 127.0.0.2; the administrator signs in from 127.0.0.1.
    const attack = Promise.all(Array.from({ length: 10 }, () => signIn(device, '127.0.0.2', 'still-wrong')))
    const admin = await signIn(device, '127.0.0.1', INITIAL_PASSWORD)
    expect(admin.body).toMatchObject({ resCode: 1, resData: { accountName: 'admin' } })
    expect((await attack).map(keyOf)).toEqual(Array(10).fill('api.error.LoginLocked'))
    expect(keyOf(await signIn(device, '127.0.0.2', INITIAL_PASSWORD))).toBe('api.error.LoginLocked')
    // Without HTTP_TRUST_PROXY a client cannot name another address for itself.
    expect(keyOf(await signIn(device, '127.0.0.2', INITIAL_PASSWORD, { 'x-forwarded-for': '127.0.0.9' }))).toBe('api.error.LoginLocked')
  })

  test('throttles wrong current passwords of ChangePassword by the address they come from', async ({ device }) => {
    const session = await signIn(device, '127.0.0.1', INITIAL_PASSWORD)
    const mtk = session.body.resData.mtk as string
    const change = (from: string, old: string) =>
      postFrom(device, from, '/gtw/cwai/login/ChangePassword', { oldPwd: md5Hex(old), newPwd: md5Hex('changed-Passw0rd') }, { mtk })
    const guesses = await Promise.all(Array.from({ length: 12 }, (_, i) => change('127.0.0.3', `guess-${i}`)))
    expect(guesses.map(keyOf).filter((key) => key === 'api.error.LoginFailed')).toHaveLength(5)
    expect(guesses.map(keyOf).filter((key) => key === 'api.error.LoginLocked')).toHaveLength(7)
    expect(keyOf(await change('127.0.0.3', INITIAL_PASSWORD))).toBe('api.error.LoginLocked')
    expect((await change('127.0.0.1', INITIAL_PASSWORD)).body).toMatchObject({ resCode: 1, resData: { revokedSessions: 2 } })
  })

  test('a flood of wrong current passwords from forty addresses is answered at once (LoginBusy, retryAfterSeconds) and the administrator changes the password from another', async ({ device }) => {
    // The previous test changed the password: sign in with the new one.
    const session = await signIn(device, '127.0.0.1', CHANGED_PASSWORD)
    expect(session.body.resCode).toBe(1)
    const mtk = session.body.resData.mtk as string
    const change = async (from: string, old: string, next: string) => {
      const started = performance.now()
      const answer = await postFrom(device, from, '/gtw/cwai/login/ChangePassword', { oldPwd: md5Hex(old), newPwd: md5Hex(next) }, { mtk })
      return { ...answer, ms: performance.now() - started }
    }
    // Forty addresses, none blocked on its own (one guess each): the account-wide spacing applies.
    const flood = await Promise.all(Array.from({ length: 40 }, (_, i) => change(`127.0.1.${i + 1}`, `flood-${i}`, 'flood-Passw0rd')))
    const keys = flood.map(keyOf)
    expect(keys.every((key) => key === 'api.error.LoginFailed' || key === 'api.error.LoginBusy')).toBe(true)
    // Beyond 20 recent failures of the account the checks are spaced: the rest are refused, not held.
    const failed = keys.filter((key) => key === 'api.error.LoginFailed').length
    expect(failed).toBeGreaterThanOrEqual(1)
    expect(failed).toBeLessThanOrEqual(21)
    for (const answer of flood.filter((a) => keyOf(a) === 'api.error.LoginBusy')) {
      expect(answer.status).toBe(200)
      const item = answer.body.resMsg[0]
      expect(item).toMatchObject({ retryable: true, recommendedAction: 'RETRY_LATER' })
      expect(item.retryAfterSeconds).toBeGreaterThanOrEqual(1)
      // The spacing (LOGIN_ACCOUNT_DELAY_MAX_MS, 2 s) or the wait for the turn the device expects.
      expect(item.retryAfterSeconds).toBeLessThanOrEqual(10)
      expect(item.details.retryAfterSeconds).toBe(item.retryAfterSeconds)
    }
    // Every one answered quickly: at most the two seconds a check may wait for its turn, and its
    // own check (held, the twenty beyond the free failures would have waited up to 2 s each, in turn).
    expect(Math.max(...flood.map((a) => a.ms))).toBeLessThan(5000)

    // The administrator, from another address, while the flood goes on: an answer at once each
    // time, and the change succeeds once the wait it was given has passed.
    const attack = Promise.all(Array.from({ length: 20 }, (_, i) => change(`127.0.2.${i + 1}`, `again-${i}`, 'flood-Passw0rd')))
    let admin = await change('127.0.0.1', CHANGED_PASSWORD, 'third-Passw0rd')
    for (let tries = 0; keyOf(admin) === 'api.error.LoginBusy' && tries < 10; tries++) {
      expect(admin.ms).toBeLessThan(1500)
      await new Promise((resolve) => setTimeout(resolve, admin.body.resMsg[0].retryAfterSeconds * 1000))
      admin = await change('127.0.0.1', CHANGED_PASSWORD, 'third-Passw0rd')
    }
    expect(admin.body).toMatchObject({ resCode: 1, resData: { revokedSessions: 1 } })
    expect(Math.max(...(await attack).map((a) => a.ms))).toBeLessThan(5000)
  })
})
