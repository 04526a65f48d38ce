import { expect } from 'vitest'
import { randomUUID } from 'node:crypto'
import { startDevice, type DeviceProcess } from '../helpers/device.ts'
import { type Broker } from '../helpers/mosquitto.ts'
import { brokerTest } from '../helpers/broker-fixture.ts'
import { recordTopics, type Recorder } from '../helpers/mqtt-client.ts'
import { REGISTRATION_FIELDS } from '../../runtime/events/mqtt-topics.ts'
import { md5Hex } from '../../shared/auth/password.ts'

const clientId = `dev-${randomUUID().slice(0, 8)}`
const base = `cwai/${clientId}`

/** The device publishes to a broker of the file's own. */
const test = brokerTest
  // A persistent session, so that messages published while the test client is away
  // (broker restart) are kept for it; subscribed before the device starts.
  .extend('recorder', { scope: 'file' }, async ({ broker }, { onCleanup }) => {
    const recorder = await recordTopics(broker.url, `${base}/#`, { clientId: `rec-${clientId}`, clean: false })
    onCleanup(() => recorder.close())
    return recorder
  })
test.override('deviceOptions', { scope: 'file' }, async ({ broker, recorder: _subscribedFirst }: { broker: Broker; recorder: Recorder }) => ({
  env: { MQTT_URL: broker.url, MQTT_CLIENT_ID: clientId, LOGIN_MAX_FAILURES: '1', MQTT_MAX_REQUESTS_IN_FLIGHT: '2', MQTT_RECONNECT_MIN_MS: '100', MQTT_RECONNECT_MAX_MS: '400', EVENT_POLL_MS: '100', METRICS_TOKEN: randomUUID() },
}))

// Real mosquitto, real runtime: registration, per-kind event topics, the request transport
// (spec 5.6) and delivery across a broker restart.
test.describe('MQTT channel', () => {
  let broker: Broker
  let device: DeviceProcess
  let recorder: Recorder
  let env: Record<string, string>
  /** The file's device started again on its data folder (a test below). */
  let restarted: DeviceProcess | undefined

  const failSignIn = (d: DeviceProcess, account: string) => d.post('/gtw/cwai/login/DoLogin', { account, pwd: md5Hex('wrong password') })
  const request = async (requestId: string, path: string, body?: unknown) => {
    await recorder.client.publishAsync(`${base}/request`, JSON.stringify({ requestId, path, body }), { qos: 1 })
    return (await recorder.waitFor((m) => m.topic === `${base}/response` && m.body.requestId === requestId)).body
  }

  test.beforeAll(async ({ broker: started, recorder: subscribed, deviceOptions, device: running }) => {
    broker = started
    recorder = subscribed
    env = deviceOptions.env!
    device = running
  })

  // The restarted device stops before the fixture removes the data folder they share.
  test.afterAll(async () => {
    await restarted?.stop()
  })

  test('registers with a retained registration message and a retained online status', async () => {
    const registration = await recorder.waitFor((m) => m.topic === `${base}/registration`)
    expect(registration.body).toMatchObject({ clientId, softwareVersion: '1.0.0', topics: { request: `${base}/request`, response: `${base}/response`, status: `${base}/status` } })
    expect(registration.body.eventKinds).toContain('login.locked')
    // Exactly the documented fields (the MQTT interface document and README "MQTT" list them).
    expect(Object.keys(registration.body).sort()).toEqual(Object.keys(REGISTRATION_FIELDS).sort())
    await recorder.waitFor((m) => m.topic === `${base}/status` && m.body.state === 'online')
    // A client connecting later still sees both (retained).
    const late = await recordTopics(broker.url, `${base}/+`)
    try {
      const retained = await late.waitFor((m) => m.topic === `${base}/registration`)
      expect(retained.retain).toBe(true)
      expect((await late.waitFor((m) => m.topic === `${base}/status`)).body).toEqual({ state: 'online', clientId })
    } finally {
      await late.close()
    }
  })

  test('publishes each event to the topic of its kind', async () => {
    const started = await recorder.waitFor((m) => m.topic === `${base}/event/device.started`)
    expect(started.body).toMatchObject({ kind: 'device.started', source: 'runtime', payload: { softwareVersion: '1.0.0' } })
    expect(Number.isInteger(started.body.id)).toBe(true)

    expect((await failSignIn(device, 'mqtt-lock-1')).body.resMsg[0].messageKey).toBe('api.error.LoginFailed')
    const locked = await recorder.waitFor((m) => m.topic === `${base}/event/login.locked` && m.body.payload.accountName === 'mqtt-lock-1')
    expect(locked.body).toMatchObject({ kind: 'login.locked', source: 'login', payload: { accountName: 'mqtt-lock-1', failures: 1 } })
    expect(locked.body.id).toBeGreaterThan(started.body.id)
    expect(Date.parse(locked.body.time)).not.toBeNaN()
  })

  test('counts the acknowledged publishes in the metrics (README "Metrics")', async () => {
    // The scrape token, not an admin sign-in: LOGIN_MAX_FAILURES=1 and the tests below sign in themselves.
    const delivered = async () => {
      const text = await (await fetch(`${device.url}/gtw/cwai/System/Metrics`, { headers: { authorization: `Bearer ${env.METRICS_TOKEN}` } })).text()
      return Number(/^event_deliveries_total\{channel="mqtt",outcome="delivered"\} (\d+)$/m.exec(text)?.[1] ?? 0)
    }
    // device.started and login.locked at least; a publish is counted when its PUBACK is handled,
    // which can come just after the subscriber above already received it.
    let before = await delivered()
    for (const deadline = Date.now() + 5000; before < 2 && Date.now() < deadline; before = await delivered()) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(before).toBeGreaterThanOrEqual(2)
    await failSignIn(device, 'mqtt-metrics')
    await recorder.waitFor((m) => m.topic === `${base}/event/login.locked` && m.body.payload.accountName === 'mqtt-metrics')
    const deadline = Date.now() + 5000
    while ((await delivered()) === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(await delivered()).toBe(before + 1)
  })

  test('runs a request through the router without mtk and answers with the envelope and request id', async () => {
    const answer = await request('req-page', '/gtw/cwai/Event/EventPage', { kinds: ['login.locked'], pageSize: 5 })
    expect(answer.status).toBe(200)
    expect(answer.path).toBe('/gtw/cwai/Event/EventPage')
    expect(answer.envelope).toMatchObject({ resCode: 1, resMsg: [], resultCode: '0' })
    expect(answer.envelope.resData.rows.map((r: any) => r.payload.accountName)).toContain('mqtt-lock-1')

    const invalid = await request('req-invalid', '/gtw/cwai/Event/EventPage', { pageSize: 'many' })
    expect(invalid.envelope.resCode).toBe(0)
    expect(invalid.envelope.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/pageSize' } })

    const unknown = await request('req-unknown', '/gtw/cwai/Nope/Nothing', {})
    expect(unknown.status).toBe(404)
    expect(unknown.envelope.resMsg[0].messageKey).toBe('api.error.RouteNotFound')
  })

  test('refuses, without running them, a payload over the JSON body limit and requests beyond the in-flight bound (README "MQTT")', async () => {
    const padding = 'x'.repeat(1024 * 1024)
    const large = JSON.stringify({ requestId: 'req-large', path: '/gtw/cwai/Event/EventPage', body: { padding } })
    await recorder.client.publishAsync(`${base}/request`, large, { qos: 1 })
    const refused = await recorder.waitFor((m) => m.topic === `${base}/response` && m.body.envelope.resMsg?.[0]?.messageKey === 'api.error.httpBodyTooLarge')
    expect(refused.body).toMatchObject({ requestId: null, status: 413 })
    expect(refused.body.envelope.resMsg[0]).toMatchObject({ recommendedAction: 'REDUCE_REQUEST_BODY', details: { limitBytes: 1024 * 1024, actualBytes: Buffer.byteLength(large) } })

    // 24 at once against MQTT_MAX_REQUESTS_IN_FLIGHT=2: each is run or refused, every one answered.
    const ids = Array.from({ length: 24 }, (_, i) => `req-flood-${i}`)
    const answers = await Promise.all(ids.map((id) => request(id, '/gtw/cwai/Event/EventPage', { pageSize: 50 })))
    const busy = answers.filter((a) => a.envelope.resCode === 0)
    expect(answers.filter((a) => a.envelope.resCode === 1).length + busy.length).toBe(ids.length)
    expect(busy.length).toBeGreaterThan(0)
    for (const answer of busy) {
      expect(answer.status).toBe(429)
      expect(answer.envelope.resMsg[0]).toMatchObject({ messageKey: 'api.error.MqttBusy', retryable: true, recommendedAction: 'RETRY_LATER', details: { requestId: answer.requestId, limit: 2 } })
    }
    expect((await request('req-after-flood', '/gtw/cwai/Event/EventPage', { pageSize: 1 })).envelope.resCode).toBe(1)
  })

  test('refuses a request that arrives before registration is complete, then serves requests', async () => {
    const dataDir = device.dataDir
    await device.stop()
    await recorder.waitFor((m) => m.topic === `${base}/status` && m.body.state === 'offline')
    // Queued by the broker for the device's persistent session; delivered right after it
    // reconnects, before it has re-registered.
    await recorder.client.publishAsync(`${base}/request`, JSON.stringify({ requestId: 'req-early', path: '/gtw/cwai/Event/EventPage', body: {} }), { qos: 1 })
    const onlineBefore = recorder.messages.length
    device = restarted = await startDevice({ env, dataDir })
    const early = await recorder.waitFor((m) => m.topic === `${base}/response` && m.body.requestId === 'req-early')
    expect(early.body.envelope.resCode).toBe(0)
    expect(early.body.envelope.resMsg[0]).toMatchObject({ messageKey: 'api.error.MqttNotRegistered', retryable: true, recommendedAction: 'RETRY_LATER' })
    await recorder.waitFor((m) => recorder.messages.indexOf(m) >= onlineBefore && m.topic === `${base}/status` && m.body.state === 'online')
    const late = await request('req-late', '/gtw/cwai/Event/EventPage', { pageSize: 1 })
    expect(late.envelope.resCode).toBe(1)
  })

  test('delivers events produced while the broker was down once it is back', async () => {
    await broker.stop()
    const accounts = ['outage-1', 'outage-2', 'outage-3']
    for (const account of accounts) expect((await failSignIn(device, account)).body.resMsg[0].messageKey).toBe('api.error.LoginFailed')
    await broker.start()
    for (const account of accounts) {
      const m = await recorder.waitFor((x) => x.topic === `${base}/event/login.locked` && x.body.payload.accountName === account, 30_000)
      expect(m.body.kind).toBe('login.locked')
    }
  })

  test('applies new MQTT settings from the System endpoint without a restart', async () => {
    const mtk = await device.adminToken()
    const bad = await device.post('/gtw/cwai/System/SetMqttParam', { url: 'http://127.0.0.1:1' }, mtk)
    expect(bad.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/url' } })
    const wildcard = await device.post('/gtw/cwai/System/SetMqttParam', { topicPrefix: 'a/#' }, mtk)
    expect(wildcard.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/topicPrefix' } })
    const passwordOnly = await device.post('/gtw/cwai/System/SetMqttParam', { password: 'secret' }, mtk)
    expect(passwordOnly.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/username' } })
    expect((await device.post('/gtw/cwai/System/QueryEventChannelStatus', {}, mtk)).body.resData.mqtt.state).toBe('registered')

    const other = await recordTopics(broker.url, `moved/${clientId}/#`)
    try {
      const set = await device.post('/gtw/cwai/System/SetMqttParam', { topicPrefix: 'moved', username: 'device', password: 'not-used-by-this-broker' }, mtk)
      expect(set.body.resData).toMatchObject({ enabled: true, url: broker.url, clientId, topicPrefix: 'moved', username: 'device', passwordSet: true })
      expect(JSON.stringify(set.body)).not.toContain('not-used-by-this-broker')
      await other.waitFor((m) => m.topic === `moved/${clientId}/registration`)
      await failSignIn(device, 'moved-prefix')
      const event = await other.waitFor((m) => m.topic === `moved/${clientId}/event/login.locked`)
      expect(event.body.payload.accountName).toBe('moved-prefix')
      const query = await device.post('/gtw/cwai/System/QueryMqttParam', {}, mtk)
      expect(query.body.resData).toMatchObject({ topicPrefix: 'moved', passwordSet: true })
      expect(query.body.resData.password).toBeUndefined()
    } finally {
      await other.close()
    }
  })
})
