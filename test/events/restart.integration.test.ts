import { afterAll, describe, expect, it } from 'vitest'
import { startDevice, type DeviceProcess } from '../helpers/device.ts'
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts'
import { md5Hex } from '../../shared/auth/password.ts'

// At-least-once across a crash: events still undelivered when the runtime is SIGKILLed are
// delivered after the restart (outbox and cursors live in libsql).
describe('events across a SIGKILL', () => {
  let device: DeviceProcess | null = null
  let receiver: Receiver | null = null
  afterAll(async () => {
    await device?.stop()
    device?.cleanup()
    await receiver?.close()
  })

  it('delivers events that were in the outbox when the runtime was killed', async () => {
    receiver = await startReceiver()
    let up = false
    receiver.respond = () => (up ? 200 : 503)
    device = await startDevice({ env: { LOGIN_MAX_FAILURES: '1', EVENT_POLL_MS: '100' } })
    const mtk = await device.adminToken()
    // Configured at run time: the stored setting must survive the restart too.
    const set = await device.post('/gtw/cwai/System/SetHttpParam', { enabled: true, urls: [receiver.url], maxAttempts: 100, backoffBaseMs: 50, backoffMaxMs: 200 }, mtk)
    expect(set.body.resCode).toBe(1)

    const accounts = ['kill-1', 'kill-2', 'kill-3']
    for (const account of accounts) await device.post('/gtw/cwai/login/DoLogin', { account, pwd: md5Hex('wrong password') })
    // The first is being retried: all three are in the outbox, none acknowledged.
    await receiver.waitFor((d) => d.body?.payload?.accountName === 'kill-1' && d.status === 503)
    await device.kill()

    up = true
    device = await startDevice({ dataDir: device.dataDir, env: { LOGIN_MAX_FAILURES: '1', EVENT_POLL_MS: '100' } })
    for (const account of accounts) await receiver.waitFor((d) => d.body?.payload?.accountName === account && d.status === 200)
    const acknowledged = receiver.deliveries.filter((d) => d.status === 200 && accounts.includes(d.body?.payload?.accountName))
    expect(acknowledged.map((d) => d.body.payload.accountName)).toEqual(accounts)
    const ids = acknowledged.map((d) => d.body.id)
    expect([...ids].sort((a, b) => a - b)).toEqual(ids)
  })
})
