import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Type } from '@sinclair/typebox'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'
import { createApp } from '../../runtime/http/app.ts'
import { InFlight } from '../../runtime/http/inflight.ts'
import type { RouteTable } from '../../runtime/http/route-table.ts'
import { defineHandler } from '../../shared/handler.ts'

// The request id and the security headers every answer carries (runtime/http/app.ts).
const echo = defineHandler({ routes: ['/t/echo'], auth: 'anonymous', body: 'json', summary: '', input: Type.Object({}), handle: (_input, ctx) => ({ requestId: ctx.requestId }) })
const table = {
  lookup: (path: string) => (path === '/t/echo' ? { hash: 'x', load: async () => echo, route: { path, methods: ['POST'], auth: 'anonymous', body: 'json', bundle: 'test', summary: '' } } : undefined),
  routes: () => [],
} as unknown as RouteTable

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('HTTP headers', () => {
  let t: TestRuntime
  let app: ReturnType<typeof createApp>
  beforeAll(async () => {
    t = await createTestRuntime()
    app = createApp(t.runtime.services, table, new InFlight())
  })
  afterAll(async () => t.close())

  const call = (headers: Record<string, string> = {}) => app.request('/t/echo', { method: 'POST', body: '{}', headers })

  it('keeps a sane incoming X-Request-Id, gives the handler the same id and echoes it', async () => {
    for (const id of ['req-42', 'A_b=c-9', 'x'.repeat(128)]) {
      const response = await call({ 'x-request-id': id })
      expect(response.headers.get('x-request-id')).toBe(id)
      expect((await response.json()).resData).toEqual({ requestId: id })
    }
  })

  it('replaces a missing, overlong or unsafe X-Request-Id with a fresh UUID', async () => {
    const seen = new Set<string>()
    const cases: Record<string, string>[] = [{}, { 'x-request-id': 'x'.repeat(129) }, { 'x-request-id': 'a b' }, { 'x-request-id': '<script>' }, { 'x-request-id': 'a.b:c' }]
    for (const headers of cases) {
      const response = await call(headers)
      const id = response.headers.get('x-request-id') ?? ''
      expect(id).toMatch(UUID)
      expect((await response.json()).resData).toEqual({ requestId: id })
      seen.add(id)
    }
    expect(seen.size).toBe(5)
  })

  it('sends the secure headers on API answers, without HSTS (plain HTTP) and without a CSP', async () => {
    const response = await call()
    expect(response.status).toBe(200)
    expect(Object.fromEntries([
      'x-content-type-options', 'referrer-policy', 'x-frame-options', 'cross-origin-resource-policy', 'cross-origin-opener-policy',
      'strict-transport-security', 'content-security-policy', 'x-powered-by',
    ].map((name) => [name, response.headers.get(name)]))).toEqual({
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'cross-origin-resource-policy': 'same-origin',
      'cross-origin-opener-policy': 'same-origin',
      'strict-transport-security': null,
      'content-security-policy': null,
      'x-powered-by': null,
    })
  })

  it('gives the console a CSP that allows only the device: same origin and its WebSocket listener', async () => {
    const policy = (host: string) =>
      `default-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; connect-src 'self' ws://${host}:*; style-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'`
    const page = await app.request('http://192.168.1.20:8080/console/')
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('<script type="module" src="/console/app.js"></script>')
    expect(page.headers.get('content-security-policy')).toBe(policy('192.168.1.20'))
    expect(page.headers.get('x-content-type-options')).toBe('nosniff')
    expect(page.headers.get('strict-transport-security')).toBeNull()
    const script = await app.request('http://[fe80::1]:8080/console/app.js')
    expect(script.status).toBe(200)
    expect(script.headers.get('content-security-policy')).toBe(policy('[fe80::1]'))
  })
})
