import { createServer as createHttpServer, type Server as HttpServer } from 'node:http'
import { createServer, type AddressInfo, type Server } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import QueryTargets from '../../functions/network/QueryTargets.ts'
import SetTargets from '../../functions/network/SetTargets.ts'
import TestConnectivity from '../../functions/network/TestConnectivity.ts'
import TestQuality from '../../functions/network/TestQuality.ts'
import { NetworkTargets } from '../../shared/network/schemas.ts'
import { validateInput } from '../../shared/schema/validate.ts'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'

// Loopback targets only: a TCP listener, an HTTP server, a closed port, and `localhost`.
describe('network quality and connectivity checks (spec 4.10 Network)', () => {
  let t: TestRuntime
  let tcp: Server
  let http: HttpServer
  let tcpPort: number
  let httpPort: number
  let closedPort: number
  beforeAll(async () => {
    t = await createTestRuntime()
    tcp = createServer((socket) => socket.destroy())
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve))
    tcpPort = (tcp.address() as AddressInfo).port
    http = createHttpServer((request, response) => {
      if (request.url === '/slow') return // never answers: the check's timeout ends it
      response.writeHead(request.url === '/ok' ? 200 : request.url === '/moved' ? 302 : 503, { location: '/ok' }).end('x')
    })
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
    httpPort = (http.address() as AddressInfo).port
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    closedPort = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
  })
  afterAll(async () => {
    http.closeAllConnections()
    await Promise.all([new Promise((r) => tcp.close(r)), new Promise((r) => http.close(r))])
    await t.close()
  })

  const store = (targets: Partial<NetworkTargets>) =>
    SetTargets.handle({ qualityTargets: [], checks: [], samples: 3, timeoutMs: 500, ...targets }, t.ctx())

  it('stores targets and checks; none by default; a name used twice is refused', async () => {
    expect(await QueryTargets.handle({}, t.ctx())).toEqual({ qualityTargets: [], checks: [], samples: 5, timeoutMs: 2000 })
    const targets: NetworkTargets = {
      qualityTargets: [{ name: 'gw', host: '127.0.0.1', port: tcpPort }],
      checks: [{ name: 'resolver', type: 'dns', hostname: 'localhost' }],
      samples: 4,
      timeoutMs: 700,
    }
    await SetTargets.handle(targets, t.ctx())
    expect(await QueryTargets.handle({}, t.ctx())).toEqual(targets)
    await expect(store({ checks: [{ name: 'a', type: 'dns', hostname: 'localhost' }, { name: 'a', type: 'tcp', host: '127.0.0.1', port: 1 }] }))
      .rejects.toMatchObject({ item: { messageKey: 'api.error.InvalidParam', details: { field: '/checks' } } })
    expect(await QueryTargets.handle({}, t.ctx())).toEqual(targets)
  })

  it('bounds what can be stored: samples, timeout, URL scheme', () => {
    const valid = { qualityTargets: [], checks: [], samples: 3, timeoutMs: 500 }
    expect(() => validateInput(NetworkTargets, { ...valid, samples: 11 })).toThrow(expect.objectContaining({ item: expect.objectContaining({ details: expect.objectContaining({ field: '/samples' }) }) }))
    expect(() => validateInput(NetworkTargets, { ...valid, timeoutMs: 60_000 })).toThrow(/timeoutMs/)
    expect(() => validateInput(NetworkTargets, { ...valid, checks: [{ name: 'x', type: 'http', url: 'ftp://127.0.0.1/' }] })).toThrow(/checks/)
    expect(validateInput(NetworkTargets, valid)).toEqual(valid)
  })

  it('measures latency, jitter and loss with timed TCP connects', async () => {
    await store({ qualityTargets: [{ name: 'up', host: '127.0.0.1', port: tcpPort }, { name: 'down', host: '127.0.0.1', port: closedPort }] })
    const result = await TestQuality.handle({}, t.ctx())
    expect(result.total).toBe(2)
    const [up, down] = result.rows
    expect(up).toMatchObject({ name: 'up', host: '127.0.0.1', port: tcpPort, method: 'tcp-connect', sent: 3, received: 3, lossPercent: 0, lastError: null })
    expect(up!.latencyMs!.min).toBeGreaterThan(0)
    expect(up!.latencyMs!.min).toBeLessThanOrEqual(up!.latencyMs!.avg)
    expect(up!.latencyMs!.avg).toBeLessThanOrEqual(up!.latencyMs!.max)
    expect(up!.jitterMs).toBeGreaterThanOrEqual(0)
    // Every figure is rounded to 0.01 ms on its own, so the rounded jitter may pass max − min by one step.
    expect(up!.jitterMs).toBeLessThanOrEqual(up!.latencyMs!.max - up!.latencyMs!.min + 0.01 + 1e-9)
    expect(down).toEqual({ name: 'down', host: '127.0.0.1', port: closedPort, method: 'tcp-connect', sent: 3, received: 0, lossPercent: 100, latencyMs: null, jitterMs: null, lastError: 'ECONNREFUSED' })
    const one = await TestQuality.handle({ names: ['down'] }, t.ctx())
    expect(one.rows.map((r) => r.name)).toEqual(['down'])
  })

  it('runs TCP, HTTP and DNS checks with per-check results, each bounded by the timeout', async () => {
    await store({
      checks: [
        { name: 'tcp-up', type: 'tcp', host: '127.0.0.1', port: tcpPort },
        { name: 'tcp-closed', type: 'tcp', host: '127.0.0.1', port: closedPort },
        { name: 'http-ok', type: 'http', url: `http://127.0.0.1:${httpPort}/ok` },
        { name: 'http-moved', type: 'http', url: `http://127.0.0.1:${httpPort}/moved` },
        { name: 'http-503', type: 'http', url: `http://127.0.0.1:${httpPort}/down` },
        { name: 'http-slow', type: 'http', url: `http://127.0.0.1:${httpPort}/slow` },
        { name: 'dns-localhost', type: 'dns', hostname: 'localhost' },
      ],
    })
    const started = Date.now()
    const result = await TestConnectivity.handle({}, t.ctx())
    expect(Date.now() - started).toBeLessThan(1500) // the slow server does not hold the answer past the 500 ms timeout
    expect(result.allOk).toBe(false)
    const byName = Object.fromEntries(result.rows.map((r) => [r.name, r]))
    expect(byName['tcp-up']).toMatchObject({ type: 'tcp', target: `127.0.0.1:${tcpPort}`, ok: true, error: null })
    expect(byName['tcp-closed']).toMatchObject({ ok: false, error: 'ECONNREFUSED' })
    expect(byName['http-ok']).toMatchObject({ type: 'http', ok: true, status: 200, error: null })
    expect(byName['http-moved']).toMatchObject({ ok: true, status: 302 })
    expect(byName['http-503']).toMatchObject({ ok: false, status: 503, error: 'HTTP 503' })
    expect(byName['http-slow']).toMatchObject({ ok: false, error: 'ETIMEDOUT' })
    expect(byName['http-slow']!.timeMs).toBeGreaterThanOrEqual(450)
    expect(byName['dns-localhost']).toMatchObject({ type: 'dns', target: 'localhost', ok: true, error: null })
    expect(byName['dns-localhost']!.addresses!.some((a) => a === '127.0.0.1' || a === '::1')).toBe(true)
    for (const row of result.rows) expect(row.timeMs).toBeGreaterThanOrEqual(0)

    const picked = await TestConnectivity.handle({ names: ['http-ok', 'dns-localhost'] }, t.ctx())
    expect(picked).toMatchObject({ allOk: true, total: 2 })
  })

  it('probes only stored targets: an unknown name is refused', async () => {
    await expect(TestConnectivity.handle({ names: ['nope'] }, t.ctx()))
      .rejects.toMatchObject({ item: { messageKey: 'api.error.InvalidParam', details: { field: '/names', unknown: ['nope'] } } })
    await expect(TestQuality.handle({ names: ['nope'] }, t.ctx())).rejects.toMatchObject({ item: { details: { unknown: ['nope'] } } })
  })
})
