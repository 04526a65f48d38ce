import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Type } from '@sinclair/typebox'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'
import { createApp } from '../../runtime/http/app.ts'
import { InFlight } from '../../runtime/http/inflight.ts'
import type { RouteTable } from '../../runtime/http/route-table.ts'
import { defineHandler } from '../../shared/handler.ts'
import { md5Hex } from '../../shared/auth/password.ts'
import { issueSession } from '../../runtime/auth/sessions.ts'
import { users } from '../../shared/db/schema/index.ts'

const MB = 1024 * 1024

/** A body that arrives in pieces with no Content-Length, so only the streaming limit can stop it. */
function chunkedBody(totalBytes: number, piece = 64 * 1024) {
  let sent = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= totalBytes) return controller.close()
      const size = Math.min(piece, totalBytes - sent)
      sent += size
      controller.enqueue(new Uint8Array(size).fill(0x61))
    },
  })
}

test.describe('JSON body limit on the real runtime (spec 8)', () => {
  const expect413 = async (response: Response) => {
    expect(response.status).toBe(413)
    const body = await response.json()
    expect(body.resCode).toBe(0)
    expect(body.resMsg[0]).toMatchObject({
      msgCode: 'HTTP_BODY_TOO_LARGE',
      messageKey: 'api.error.httpBodyTooLarge',
      recommendedAction: 'REDUCE_REQUEST_BODY',
      retryable: false,
      details: { limitBytes: MB },
    })
    return body.resMsg[0]
  }

  test('refuses a 1 MB + 1 byte body with a declared length, naming the actual size', async ({ device }) => {
    const body = `{"account":"${'a'.repeat(MB + 1 - 14)}"}`
    expect(Buffer.byteLength(body)).toBe(MB + 1)
    const item = await expect413(await fetch(`${device.url}/gtw/cwai/login/DoLogin`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }))
    expect(item.details.actualBytes).toBe(MB + 1)
  })

  test('refuses a streamed body without Content-Length once it passes 1 MB', async ({ device }) => {
    await expect413(await fetch(`${device.url}/gtw/cwai/login/DoLogin`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: chunkedBody(MB + 1), duplex: 'half',
    } as RequestInit))
  })

  test('refuses a 10 MB + 1 byte multipart request to uploadTemp with USE_CHUNKED_UPLOAD, then keeps serving', async ({ device, mtk }) => {
    for (const streamed of [false, true]) {
      const payload = new Uint8Array(10 * MB + 1)
      const response = await fetch(`${device.url}/gtw/cwai/atomic/model/uploadTemp`, {
        method: 'POST',
        headers: { mtk, 'content-type': 'multipart/form-data; boundary=b' },
        body: streamed ? chunkedBody(10 * MB + 1) : payload,
        duplex: 'half',
      } as RequestInit)
      expect(response.status).toBe(413)
      const body = await response.json()
      expect(body.resMsg[0]).toMatchObject({ messageKey: 'api.error.httpBodyTooLarge', recommendedAction: 'USE_CHUNKED_UPLOAD', details: { limitBytes: 10 * MB } })
    }
    const capabilities = await device.post('/gtw/cwai/atomic/model/uploadCapabilities', {}, mtk)
    expect(capabilities.body.resData).toMatchObject({ activeSessions: 0, reservedBySessionsBytes: '0' })
  })

  test('accepts a body of exactly 1 MB and keeps serving after refusals', async ({ device }) => {
    const body = `{"account":"${'a'.repeat(MB - 64)}","pwd":"${md5Hex('x')}"}`.padEnd(MB, ' ')
    expect(Buffer.byteLength(body)).toBe(MB)
    const response = await device.post('/gtw/cwai/login/DoLogin', body)
    // Not a size problem: the account name is simply too long for the schema.
    expect(response.status).toBe(200)
    expect(response.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/account' } })
    const probe = await fetch(`${device.url}/v1/cwai/aihost/Probe`)
    expect(probe.status).toBe(200)
  })

  test('answers a URL or headers over 16 KB with 431 in the envelope, and malformed HTTP with 400', async ({ device }) => {
    const longUrl = await fetch(`${device.url}/v1/cwai/aihost/Probe?pad=${'a'.repeat(17 * 1024)}`)
    const longHeader = await fetch(`${device.url}/v1/cwai/aihost/Probe`, { headers: { 'x-pad': 'a'.repeat(17 * 1024) } })
    for (const response of [longUrl, longHeader]) {
      expect(response.status).toBe(431)
      expect(response.headers.get('content-type')).toBe('application/json')
      expect(response.headers.get('x-request-id')).toBeTruthy()
      expect(await response.json()).toMatchObject({
        resCode: 0, resMsg: [{ messageKey: 'api.error.httpHeadersTooLarge', retryable: false, recommendedAction: 'CHECK_REQUEST_PARAMETERS', details: { limitBytes: 16 * 1024 } }],
      })
    }
    const { connect } = await import('node:net')
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(device.port, '127.0.0.1', () => socket.end('NOT-HTTP\r\n\r\n'))
      let text = ''
      socket.on('data', (chunk) => { text += chunk })
      socket.on('end', () => resolve(text))
      socket.on('error', reject)
    })
    expect(raw).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/)
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toMatchObject({ resCode: 0, resMsg: [{ messageKey: 'api.error.InvalidParam', details: { field: '/' } }] })
    expect((await fetch(`${device.url}/v1/cwai/aihost/Probe`)).status).toBe(200)
  })

  test('answers every request of odd framing on PTaskCancle in the envelope: expectations, pipelining, bad lengths, a body cut short', async ({ device, mtk }) => {
    const { connect } = await import('node:net')
    const exchange = (text: string) => new Promise<{ statuses: number[]; bodies: any[] }>((resolve) => {
      const socket = connect(device.port, '127.0.0.1', () => socket.end(text))
      let raw = ''
      const timer = setTimeout(() => socket.destroy(), 5000)
      socket.on('data', (chunk) => { raw += chunk.toString('latin1') })
      socket.on('error', () => {})
      socket.on('close', () => {
        clearTimeout(timer)
        const statuses = [...raw.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1])).filter((status) => status !== 100)
        const bodies = [...raw.matchAll(/\r\n\r\n(\{.*?\})(?=HTTP\/1\.1|$)/gs)].map((m) => JSON.parse(m[1]!))
        resolve({ statuses, bodies })
      })
    })
    const route = '/v1/cwai/aihost/PTaskCancle'
    const head = (body: string, extra = '', length: string | number = Buffer.byteLength(body)) =>
      `POST ${route} HTTP/1.1\r\nHost: device\r\nmtk: ${mtk}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n${body}`
    const cases: [string, number[], string][] = [
      [head('{"taskId":"none"}', 'Expect: 100-continue\r\n'), [200], 'api.error.NotCreated'],
      // node:http answered this one with a bare 417 and no body.
      [head('{"taskId":"none"}', 'Expect: nothing-known\r\n'), [417], 'api.error.InvalidParam'],
      [head('{"taskId":"none"}') + head('[]') + head('{"taskId":"a","taskId":"none"}'), [200, 200, 200], 'api.error.NotCreated'],
      [head('{}', '', 10 ** 12), [413], 'api.error.httpBodyTooLarge'],
      [head('{}', '', -1), [400], 'api.error.InvalidParam'],
      [head('{"taskId"', '', 100), [400], 'api.error.InvalidParam'],
      [head('['.repeat(100_000) + ']'.repeat(100_000)), [200], 'api.error.InvalidParam'],
    ]
    for (const [text, statuses, lastKey] of cases) {
      const answer = await exchange(text)
      expect(answer.statuses, text.slice(0, 120)).toEqual(statuses)
      expect(answer.bodies).toHaveLength(statuses.length)
      for (const body of answer.bodies) expect(body).toMatchObject({ resCode: 0, resMsg: [{ messageKey: expect.any(String), recommendedAction: expect.any(String) }] })
      expect(answer.bodies.at(-1).resMsg[0].messageKey, text.slice(0, 120)).toBe(lastKey)
    }
    expect((await fetch(`${device.url}/v1/cwai/aihost/Probe`)).status).toBe(200)
  })
})

describe('multipart body limit in the dispatcher (spec 8), with a scripted streaming handler', () => {
  let t: TestRuntime
  let mtk: string
  let bytesSeen = 0
  const streaming = defineHandler({
    routes: ['/test/multipart'],
    auth: 'session',
    body: 'multipart',
    summary: 'test handler that reads the whole body as a stream',
    input: Type.Object({}),
    async handle(_input, ctx) {
      const reader = ctx.request!.body!.getReader()
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        bytesSeen += value.byteLength
      }
      return { bytesSeen }
    },
  })
  const table = {
    lookup: (path: string) => (path === '/test/multipart'
      ? { hash: 'x', load: async () => streaming, route: { path, methods: ['POST'], auth: 'session', body: 'multipart', bundle: 'test', summary: '' } }
      : undefined),
    routes: () => [],
  } as unknown as RouteTable

  beforeAll(async () => {
    t = await createTestRuntime({ multipartBodyLimitBytes: 10 * MB })
    const [admin] = await t.runtime.services.db.select().from(users)
    await t.runtime.services.db.update(users).set({ passwordChangeRequired: false })
    mtk = await issueSession(t.runtime.services.db, admin!.id, t.clock.now())
  })
  afterAll(async () => t.close())

  const send = (body: BodyInit, extraHeaders: Record<string, string> = {}) => {
    const app = createApp(t.runtime.services, table, new InFlight())
    return app.request('/test/multipart', { method: 'POST', headers: { mtk, 'content-type': 'multipart/form-data; boundary=x', ...extraHeaders }, body, duplex: 'half' } as RequestInit)
  }

  it('refuses 10 MB + 1 byte while streaming, with USE_CHUNKED_UPLOAD, having read no more than the limit', async () => {
    bytesSeen = 0
    const response = await send(chunkedBody(10 * MB + 1))
    expect(response.status).toBe(413)
    const body = await response.json()
    expect(body.resMsg[0]).toMatchObject({ messageKey: 'api.error.httpBodyTooLarge', recommendedAction: 'USE_CHUNKED_UPLOAD', details: { limitBytes: 10 * MB } })
    expect(bytesSeen).toBeLessThanOrEqual(10 * MB)
  })

  it('refuses a declared length over 10 MB before reading anything', async () => {
    bytesSeen = 0
    const response = await send(new Uint8Array(10 * MB + 1), { 'content-length': String(10 * MB + 1) })
    expect(response.status).toBe(413)
    expect((await response.json()).resMsg[0].details).toMatchObject({ actualBytes: 10 * MB + 1, limitBytes: 10 * MB })
    expect(bytesSeen).toBe(0)
  })

  it('passes exactly 10 MB through to the handler', async () => {
    bytesSeen = 0
    const response = await send(chunkedBody(10 * MB))
    expect(response.status).toBe(200)
    expect((await response.json()).resData).toEqual({ bytesSeen: 10 * MB })
  })

  it('refuses a non-multipart content type with 415', async () => {
    const response = await send('{}', { 'content-type': 'application/json' })
    expect(response.status).toBe(415)
    expect((await response.json()).resMsg[0].messageKey).toBe('api.error.UnsupportedMediaType')
  })
})
