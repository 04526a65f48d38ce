import { expect } from 'vitest'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { CHANGED_PASSWORD, startDevice, type DeviceProcess } from '../helpers/device.ts'
import { connectEvents } from '../helpers/ws-client.ts'
import { md5Hex } from '../../shared/auth/password.ts'

test.override('deviceOptions', { env: { LOGIN_MAX_FAILURES: '1', EVENT_POLL_MS: '100' } })

// The event WebSocket listener of the real runtime (spec 6).
test.describe('event WebSocket', () => {
  let device: DeviceProcess
  let mtk: string
  const failSignIn = (account: string) => device.post('/gtw/cwai/login/DoLogin', { account, pwd: md5Hex('wrong password') })

  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
  })

  test('listens on the port it logs', () => {
    expect(device.wsPort).toBeGreaterThan(0)
    expect(device.wsPort).not.toBe(device.port)
  })

  test('closes with policy violation (1008) without a valid mtk', async () => {
    const none = connectEvents(device.wsPort)
    expect((await none.closed).code).toBe(1008)
    const wrong = connectEvents(device.wsPort, { mtk: 'not-a-session' })
    expect((await wrong.closed).code).toBe(1008)
    const wrongQuery = connectEvents(device.wsPort, { query: { mtk: 'x'.repeat(43) } })
    expect((await wrongQuery.closed).code).toBe(1008)
    expect(none.events()).toEqual([])
  })

  test('closes with 1008 on an unknown kind or a malformed lastEventId', async () => {
    const kinds = connectEvents(device.wsPort, { mtk, query: { kinds: 'login.locked,no.such.kind' } })
    expect(await kinds.closed).toMatchObject({ code: 1008 })
    const resume = connectEvents(device.wsPort, { mtk, query: { lastEventId: '12abc' } })
    expect(await resume.closed).toMatchObject({ code: 1008 })
  })

  test('receives events live, with mtk in the header or the query', async () => {
    const byHeader = connectEvents(device.wsPort, { mtk })
    const byQuery = connectEvents(device.wsPort, { query: { mtk, kinds: 'login.locked' } })
    await byHeader.waitFor((f) => f.type === 'ready')
    await byQuery.waitFor((f) => f.type === 'ready')
    await failSignIn('ws-live-1')
    for (const client of [byHeader, byQuery]) {
      const frame = await client.waitFor((f) => f.type === 'event' && f.event.payload.accountName === 'ws-live-1')
      expect(frame.event).toMatchObject({ kind: 'login.locked', source: 'login', payload: { accountName: 'ws-live-1', failures: 1 } })
    }
    byHeader.ws.close()
    byQuery.ws.close()
  })

  test('filters by kind', async () => {
    const client = connectEvents(device.wsPort, { mtk, query: { kinds: 'login.locked' } })
    await client.waitFor((f) => f.type === 'ready')
    // A non-matching event (password.changed) is written before the matching marker; were
    // the filter ignored, it would arrive first (events go out in id order).
    const change = (oldPwd: string, newPwd: string, token: string) => device.post('/gtw/cwai/login/ChangePassword', { oldPwd: md5Hex(oldPwd), newPwd: md5Hex(newPwd) }, token)
    expect((await change(CHANGED_PASSWORD, 'third-Passw0rd', mtk)).body.resCode).toBe(1)
    await failSignIn('ws-filter-marker')
    await client.waitFor((f) => f.type === 'event' && f.event.payload.accountName === 'ws-filter-marker')
    expect(client.events().map((e) => e.kind)).toEqual(['login.locked'])
    client.ws.close()
    // Back to the password the other tests use.
    const third = await device.post('/gtw/cwai/login/DoLogin', { account: 'admin', pwd: md5Hex('third-Passw0rd') })
    expect((await change('third-Passw0rd', CHANGED_PASSWORD, third.body.resData.mtk)).body.resCode).toBe(1)
    mtk = (await device.post('/gtw/cwai/login/DoLogin', { account: 'admin', pwd: md5Hex(CHANGED_PASSWORD) })).body.resData.mtk
  })

  test('resumes after the last seen id without gaps or duplicates', async () => {
    const first = connectEvents(device.wsPort, { mtk, query: { kinds: 'login.locked' } })
    await first.waitFor((f) => f.type === 'ready')
    for (const account of ['resume-1', 'resume-2']) await failSignIn(account)
    await first.waitFor((f) => f.type === 'event' && f.event.payload.accountName === 'resume-2')
    const seen = first.events()
    const lastSeen = seen[seen.length - 1].id
    first.ws.close()
    await first.closed

    // Produced while no client is connected.
    const missed = ['resume-3', 'resume-4', 'resume-5']
    for (const account of missed) await failSignIn(account)

    const second = connectEvents(device.wsPort, { mtk, query: { kinds: 'login.locked', lastEventId: String(lastSeen) } })
    const ready = await second.waitFor((f) => f.type === 'ready')
    expect(ready.resumedFrom).toBe(lastSeen)
    await second.waitFor((f) => f.type === 'event' && f.event.payload.accountName === 'resume-5')
    await failSignIn('resume-6')
    await second.waitFor((f) => f.type === 'event' && f.event.payload.accountName === 'resume-6')
    const resumed = second.events()
    expect(resumed.map((e) => e.payload.accountName)).toEqual([...missed, 'resume-6'])
    const ids = resumed.map((e) => e.id)
    expect(ids[0]).toBeGreaterThan(lastSeen)
    expect([...ids].sort((a, b) => a - b)).toEqual(ids)
    expect(new Set(ids).size).toBe(ids.length)
    second.ws.close()

    // The same events from the header form of the resume point.
    const third = connectEvents(device.wsPort, { mtk, query: { kinds: 'login.locked' }, headers: { 'last-event-id': String(lastSeen) } })
    await third.waitFor((f) => f.type === 'event' && f.event.payload.accountName === 'resume-6')
    expect(third.events().map((e) => e.id)).toEqual(ids)
    third.ws.close()
  })

  test('refuses an mtk that was signed out', async () => {
    const login = await device.post('/gtw/cwai/login/DoLogin', { account: 'admin', pwd: md5Hex(CHANGED_PASSWORD) })
    const token = login.body.resData.mtk
    expect((await device.post('/gtw/cwai/login/Logout', {}, token)).body.resCode).toBe(1)
    const client = connectEvents(device.wsPort, { mtk: token })
    expect((await client.closed).code).toBe(1008)
  })
})

// A device of its own, with other settings than the file's (which stays up meanwhile).
test.describe('event WebSocket client bound (README "WebSocket")', () => {
  let device: DeviceProcess
  test.beforeAll(async () => {
    device = await startDevice({ env: { WS_MAX_CLIENTS: '2' } })
  })
  test.afterAll(async () => {
    await device?.stop()
    device?.cleanup()
  })

  test('closes a client past WS_MAX_CLIENTS with 1013 after checking its mtk, and admits one again once another has gone', async () => {
    const mtk = await device.adminToken()
    const first = connectEvents(device.wsPort, { mtk })
    const second = connectEvents(device.wsPort, { mtk })
    await first.waitFor((f) => f.type === 'ready')
    await second.waitFor((f) => f.type === 'ready')
    // Without a valid mtk it is still the policy violation, whatever the count.
    expect((await connectEvents(device.wsPort).closed).code).toBe(1008)
    const third = connectEvents(device.wsPort, { mtk })
    expect(await third.closed).toMatchObject({ code: 1013, reason: expect.stringContaining('(2)') })
    expect(third.frames).toEqual([])
    first.ws.close()
    // The device has let the first one go once its status counts one client.
    const clients = async () => (await device.post('/gtw/cwai/System/QueryEventChannelStatus', {}, mtk)).body.resData.websocket.clients
    for (let tries = 0; (await clients()) !== 1 && tries < 100; tries++) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(await clients()).toBe(1)
    const fourth = connectEvents(device.wsPort, { mtk })
    await fourth.waitFor((f) => f.type === 'ready')
    second.ws.close()
    fourth.ws.close()
  })
})
