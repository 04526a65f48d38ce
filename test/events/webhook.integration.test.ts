import { expect } from 'vitest'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import type { DeviceProcess } from '../helpers/device.ts'
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts'
import { md5Hex } from '../../shared/auth/password.ts'
import { verifyWebhook } from '../../runtime/events/webhook-signature.ts'

const SECRET = 'webhook-test-secret'

test.override('deviceOptions', { env: { LOGIN_MAX_FAILURES: '1', EVENT_POLL_MS: '100' } })

// The webhook channel of the real runtime against a local HTTP receiver.
test.describe('webhook channel', () => {
  let device: DeviceProcess
  let receiver: Receiver
  let mtk: string
  const failSignIn = (account: string) => device.post('/gtw/cwai/login/DoLogin', { account, pwd: md5Hex('wrong password') })
  const ofAccount = (account: string) => receiver.deliveries.filter((d) => d.body?.payload?.accountName === account)

  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
    receiver = await startReceiver()
    receiver.respond = (body, attempt) => {
      const account = body?.payload?.accountName
      if (account === 'wh-flaky') return attempt <= 2 ? 500 : 200
      if (account === 'wh-dead') return 503
      return 200
    }
  })

  test.afterAll(async () => {
    await receiver?.close()
  })

  test('is configured through the System endpoints, validated, without a restart, and never returns the secret', async () => {
    const before = await device.post('/gtw/cwai/System/QueryHttpParam', {}, mtk)
    expect(before.body.resData).toMatchObject({ enabled: false, urls: [], secretSet: false })

    const bad = [
      [{ urls: ['ftp://127.0.0.1/x'] }, '/urls/0'],
      [{ maxAttempts: 0 }, '/maxAttempts'],
      [{ timeoutMs: 'fast' }, '/timeoutMs'],
      [{ enabled: true }, '/urls'],
      [{ backoffBaseMs: 5000, backoffMaxMs: 100 }, '/backoffMaxMs'],
      [{ extra: 1 }, '/extra'],
    ] as const
    for (const [body, field] of bad) {
      const answer = await device.post('/gtw/cwai/System/SetHttpParam', body, mtk)
      expect(answer.body.resCode, JSON.stringify(body)).toBe(0)
      expect(answer.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field } })
    }
    expect((await device.post('/gtw/cwai/System/QueryHttpParam', {}, mtk)).body.resData).toEqual(before.body.resData)

    const set = await device.post('/gtw/cwai/System/SetHttpParam', { enabled: true, urls: [receiver.url], secret: SECRET, maxAttempts: 3, backoffBaseMs: 50, backoffMaxMs: 200, timeoutMs: 2000 }, mtk)
    expect(set.body.resCode).toBe(1)
    expect(set.body.resData).toMatchObject({ enabled: true, urls: [receiver.url], secretSet: true, maxAttempts: 3 })
    expect(JSON.stringify(set.body)).not.toContain(SECRET)
    expect(JSON.stringify((await device.post('/gtw/cwai/System/QueryHttpParam', {}, mtk)).body)).not.toContain(SECRET)
    expect((await device.post('/gtw/cwai/System/SetHttpParam', {}, 'no-session')).status).toBe(401)
  })

  test('POSTs each event as JSON signed with HMAC-SHA256 over timestamp and body', async () => {
    await failSignIn('wh-signed')
    const delivery = await receiver.waitFor((d) => d.body?.payload?.accountName === 'wh-signed')
    expect(delivery.body).toMatchObject({ kind: 'login.locked', source: 'login', payload: { accountName: 'wh-signed' } })
    expect(delivery.headers['content-type']).toBe('application/json')
    expect(delivery.headers['x-event-id']).toBe(String(delivery.body.id))
    expect(delivery.headers['x-event-kind']).toBe('login.locked')
    const timestamp = delivery.headers['x-event-timestamp'] as string
    const signature = delivery.headers['x-event-signature'] as string
    expect(signature).toMatch(/^sha256=[0-9a-f]{64}$/)
    expect(verifyWebhook(SECRET, timestamp, delivery.raw, signature)).toBe(true)
    expect(verifyWebhook('another-secret', timestamp, delivery.raw, signature)).toBe(false)
    expect(verifyWebhook(SECRET, timestamp, delivery.raw.replace('wh-signed', 'wh-forged'), signature)).toBe(false)
  })

  test('retries a receiver that fails twice and stops once it acknowledges', async () => {
    await failSignIn('wh-flaky')
    await failSignIn('wh-after-flaky')
    await receiver.waitFor((d) => d.body?.payload?.accountName === 'wh-after-flaky' && d.status === 200)
    const attempts = ofAccount('wh-flaky')
    expect(attempts.map((d) => d.status)).toEqual([500, 500, 200])
    expect(new Set(attempts.map((d) => d.body.id)).size).toBe(1)
    // Events go out in order: the next event only after the flaky one was acknowledged.
    expect(receiver.deliveries.indexOf(attempts[2]!)).toBeLessThan(receiver.deliveries.findIndex((d) => d.body?.payload?.accountName === 'wh-after-flaky'))
  })

  test('dead-letters an event after the attempt cap, shows it to operators and moves on', async () => {
    await failSignIn('wh-dead')
    await failSignIn('wh-after-dead')
    await receiver.waitFor((d) => d.body?.payload?.accountName === 'wh-after-dead' && d.status === 200)
    expect(ofAccount('wh-dead').map((d) => d.status)).toEqual([503, 503, 503])
    const dead = await device.post('/gtw/cwai/System/QueryWebhookDeadLetters', {}, mtk)
    expect(dead.body.resData.total).toBe(1)
    expect(dead.body.resData.rows[0]).toMatchObject({ url: receiver.url, attempts: 3, lastError: 'HTTP 503', eventId: ofAccount('wh-dead')[0]!.body.id, event: { kind: 'login.locked', payload: { accountName: 'wh-dead' } } })
    const status = await device.post('/gtw/cwai/System/QueryEventChannelStatus', {}, mtk)
    expect(status.body.resData.webhook.deadLetters).toBe(1)
    expect(status.body.resData.webhook.urls[0].url).toBe(receiver.url)
  })
})
