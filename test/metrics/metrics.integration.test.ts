import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { expect } from 'vitest'
import { md5Hex } from '../../shared/auth/password.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import type { DeviceProcess } from '../helpers/device.ts'
import { uploadFile } from '../helpers/upload-file.ts'
import { connectEvents } from '../helpers/ws-client.ts'
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts'

const METRICS = '/gtw/cwai/System/Metrics'
const TOKEN = randomBytes(24).toString('base64url')
const root = path.resolve(import.meta.dirname, '../..')
const sample1 = readFileSync(path.join(root, 'node_modules/@vladmandic/face-api/demo/sample1.jpg'))

/** The value of the sample with this name and exactly these labels; undefined when there is none. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!match || match[1] !== name) continue
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]))
    const wanted = Object.entries(labels)
    if (Object.keys(found).length === wanted.length && wanted.every(([k, v]) => found[k] === v)) return Number(match[3])
  }
  return undefined
}
/** A counter or gauge series not recorded yet reads as 0. */
const value = (text: string, name: string, labels: Record<string, string> = {}) => sample(text, name, labels) ?? 0

test.override('deviceOptions', { env: { METRICS_TOKEN: TOKEN, LOGIN_MAX_FAILURES: '1', EVENT_POLL_MS: '100' } })

test.describe('Prometheus metrics endpoint on the real runtime', () => {
  let device: DeviceProcess
  let receiver: Receiver
  let mtk: string
  const scrape = async (headers: Record<string, string> = { mtk }) => {
    const response = await fetch(device.url + METRICS, { headers })
    expect(response.status).toBe(200)
    return response.text()
  }
  /** Scrapes until `check` holds (recording follows the answer a client sees by a moment). */
  const scrapeUntil = async (check: (text: string) => boolean) => {
    const deadline = Date.now() + 10_000
    let text = await scrape()
    while (!check(text) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      text = await scrape()
    }
    return text
  }

  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
    receiver = await startReceiver()
    receiver.respond = (body, attempt) => {
      const account = body?.payload?.accountName
      if (account === 'metrics-flaky') return attempt === 1 ? 500 : 200
      if (account === 'metrics-dead') return 503
      return 200
    }
  })
  test.afterAll(async () => {
    await receiver?.close()
  })

  test('refuses a scrape without an mtk or with a wrong token, with the usual envelope', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong-token' }, { authorization: `Basic ${TOKEN}` }, { mtk: 'not-a-session' }] as Record<string, string>[]) {
      const response = await fetch(device.url + METRICS, { headers })
      expect(response.status, JSON.stringify(headers)).toBe(401)
      expect(await response.json()).toMatchObject({ resCode: 0, resMsg: [{ messageKey: 'api.error.Unauthorized' }] })
    }
  })

  test('answers the text exposition to an mtk and to the configured token, and never logs the token', async () => {
    const response = await fetch(device.url + METRICS, { headers: { mtk } })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    expect(await response.text()).toContain('# TYPE http_requests_total counter')
    for (const authorization of [`Bearer ${TOKEN}`, `bearer ${TOKEN}`]) expect(await scrape({ authorization })).toContain('# TYPE http_requests_total counter')
    // A wrong token does not spoil a valid mtk.
    expect(await scrape({ mtk, authorization: 'Bearer wrong-token' })).toContain('http_requests_total')
    expect(JSON.stringify(device.logs)).not.toContain(TOKEN)
  })

  test('counts requests by the route pattern, whatever the case of the path, and unknown paths under one label', async () => {
    const labels = { route: '/v1/cwai/aihost/ViewRoutes', method: 'POST', status: '200' }
    const before = await scrape()
    expect((await device.post('/v1/cwai/aihost/ViewRoutes', {}, mtk)).status).toBe(200)
    expect((await device.post('/V1/CWAI/aihost/viewroutes', {}, mtk)).status).toBe(200)
    const marker = `NoSuch${randomBytes(6).toString('hex')}`
    expect((await fetch(`${device.url}/gtw/cwai/${marker}/Thing?x=${marker}`)).status).toBe(404)
    const after = await scrapeUntil((text) => value(text, 'http_requests_total', labels) === value(before, 'http_requests_total', labels) + 2)
    expect(value(after, 'http_requests_total', labels)).toBe(value(before, 'http_requests_total', labels) + 2)
    const unmatched = { route: 'unmatched', method: 'GET', status: '404' }
    expect(value(after, 'http_requests_total', unmatched)).toBe(value(before, 'http_requests_total', unmatched) + 1)
    expect(after).not.toContain(marker)
    // Every route label is a mounted route's pattern, a static mount or the fixed label.
    const mounted = (await device.post('/v1/cwai/aihost/ViewRoutes', {}, mtk)).body.resData.rows.map((row: { path: string }) => row.path)
    const allowed = new Set([...mounted, '/', '/console/*', '/staticfile/*', 'unmatched'])
    const routes = new Set([...after.matchAll(/\broute="([^"]*)"/g)].map((m) => m[1]))
    expect([...routes].filter((route) => !allowed.has(route))).toEqual([])
    expect(sample(after, 'http_request_duration_seconds_count', { route: labels.route, method: 'POST' })).toBeGreaterThanOrEqual(2)
  })

  test('reports process memory and event-loop lag', async () => {
    const text = await scrape()
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0)
    expect(sample(text, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0)
    expect(text).toContain('# TYPE nodejs_eventloop_lag_p99_seconds gauge')
  })

  test('counts upload bytes, refusals and sessions, and one inference per detection of the algorithm', async () => {
    const created = await device.post('/v1/cwai/aihost/PTaskCreate', { taskId: 'metrics-task', algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) }, mtk)
    expect(created.body.resCode).toBe(1)
    const before = await scrape()
    const uploadId = await uploadFile(device, mtk, sample1, 'sample1.jpg', 'image')
    const uploaded = await scrape()
    expect(value(uploaded, 'upload_received_bytes_total', { protocol: 'uploadTemp' })).toBe(value(before, 'upload_received_bytes_total', { protocol: 'uploadTemp' }) + sample1.length)
    expect(value(uploaded, 'upload_sessions', { state: 'complete' })).toBe(value(before, 'upload_sessions', { state: 'complete' }) + 1)

    // A chunk of a session that does not exist: refused, counted by its catalogue id.
    const form = new FormData()
    for (const [name, field] of Object.entries({ purpose: 'image', chunkIndex: 1, totalChunks: 2, totalSize: 20, chunkSize: 10, uploadId: randomBytes(16).toString('hex') })) form.append(name, String(field))
    form.append('file', new Blob([new Uint8Array(10)]), 'x.jpg')
    const refused = await (await fetch(`${device.url}/gtw/cwai/atomic/model/uploadTemp`, { method: 'POST', headers: { mtk }, body: form })).json()
    expect(refused.resMsg[0].messageKey).toBe('api.error.uploadNotFound')

    const detected = await device.post('/v1/cwai/aihost/PTaskDetectPic', { taskId: 'metrics-task', algorithmCode: 'face-detection', uploadId }, mtk)
    expect(detected.body.resCode).toBe(1)
    const after = await scrape()
    const ok = { algorithm: 'face-detection', outcome: 'ok' }
    expect(value(after, 'inference_duration_seconds_count', ok)).toBe(value(before, 'inference_duration_seconds_count', ok) + 1)
    expect(value(after, 'inference_duration_seconds_sum', ok)).toBeGreaterThan(value(before, 'inference_duration_seconds_sum', ok))
    const notFound = { protocol: 'uploadTemp', reason: 'UPLOAD_NOT_FOUND' }
    expect(value(after, 'upload_refusals_total', notFound)).toBe(value(before, 'upload_refusals_total', notFound) + 1)
    // The detection consumed the upload (spec 3.1 complete → consumed).
    expect(value(after, 'upload_sessions', { state: 'consumed' })).toBe(value(before, 'upload_sessions', { state: 'consumed' }) + 1)
    expect(value(after, 'upload_sessions', { state: 'complete' })).toBe(value(before, 'upload_sessions', { state: 'complete' }))
  })

  test('counts event deliveries per channel and outcome, and the backlog drains', async () => {
    const failSignIn = (account: string) => device.post('/gtw/cwai/login/DoLogin', { account, pwd: md5Hex('wrong password') })
    const set = await device.post('/gtw/cwai/System/SetHttpParam', { enabled: true, urls: [receiver.url], maxAttempts: 2, backoffBaseMs: 50, backoffMaxMs: 100, timeoutMs: 2000 }, mtk)
    expect(set.body.resCode).toBe(1)
    const client = connectEvents(device.wsPort, { mtk })
    await client.waitFor((frame) => frame.type === 'ready')
    const before = await scrape()
    const count = (text: string, channel: string, outcome: string) => value(text, 'event_deliveries_total', { channel, outcome })

    await failSignIn('metrics-flaky') // login.locked: the webhook answers 500, then 200
    await failSignIn('metrics-dead') // login.locked: 503 twice, then dead-lettered
    await client.waitFor((frame) => frame.event?.payload?.accountName === 'metrics-dead')
    const after = await scrapeUntil((text) => count(text, 'webhook', 'failed') > count(before, 'webhook', 'failed'))
    expect(count(after, 'websocket', 'delivered')).toBe(count(before, 'websocket', 'delivered') + 2)
    expect(count(after, 'webhook', 'delivered')).toBe(count(before, 'webhook', 'delivered') + 1)
    expect(count(after, 'webhook', 'retried')).toBe(count(before, 'webhook', 'retried') + 2)
    expect(count(after, 'webhook', 'failed')).toBe(count(before, 'webhook', 'failed') + 1)
    const drained = await scrapeUntil((text) => value(text, 'event_outbox_backlog', { channel: 'webhook' }) === 0)
    expect(value(drained, 'event_outbox_backlog', { channel: 'webhook' })).toBe(0)
    expect(sample(drained, 'event_outbox_backlog', { channel: 'mqtt' })).toBe(0)
    client.ws.close()
  })

  test('counts a sidecar restart', async () => {
    const readyLines = () => device.logs.filter((l) => l.msg === 'inference sidecar ready')
    const before = await scrape()
    const ready = readyLines().length
    process.kill(readyLines().at(-1)!.pid as number, 'SIGKILL')
    const deadline = Date.now() + 30_000
    while (readyLines().length === ready && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
    const after = await scrapeUntil((text) => value(text, 'inference_sidecar_restarts_total') > value(before, 'inference_sidecar_restarts_total'))
    expect(value(after, 'inference_sidecar_restarts_total')).toBe(value(before, 'inference_sidecar_restarts_total') + 1)
  })
})
