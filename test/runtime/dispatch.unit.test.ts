import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Type } from '@sinclair/typebox'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'
import { createApp } from '../../runtime/http/app.ts'
import { InFlight } from '../../runtime/http/inflight.ts'
import type { RouteTable } from '../../runtime/http/route-table.ts'
import { createLogger } from '../../runtime/log.ts'
import { defineHandler, type HandlerDefinition } from '../../shared/handler.ts'
import { ApiError } from '../../shared/errors/index.ts'
import Probe from '../../functions/aihost/Probe.ts'
import ViewRoutes from '../../functions/aihost/ViewRoutes.ts'

const table = (definitions: HandlerDefinition[]) => ({
  lookup: (path: string) => {
    const definition = definitions.find((d) => d.routes.includes(path))
    return definition && { hash: 'x', load: async () => definition, route: { path, methods: definition.methods ?? ['POST'], auth: definition.auth, body: definition.body, bundle: 'test', summary: definition.summary } }
  },
  routes: () => [],
}) as unknown as RouteTable

describe('dispatcher: envelope and error mapping', () => {
  let t: TestRuntime
  const lines: string[] = []
  beforeAll(async () => {
    t = await createTestRuntime()
  })
  afterAll(async () => t.close())

  const appWith = (...definitions: HandlerDefinition[]) => {
    const log = createLogger('info', new Writable({ write: (chunk, _e, done) => { lines.push(String(chunk)); done() } }))
    return createApp({ ...t.runtime.services, log }, table(definitions), new InFlight())
  }

  it('turns an unexpected exception into a generic internal error with the request id, logging the stack only', async () => {
    const crashing = defineHandler({ routes: ['/t/crash'], auth: 'anonymous', body: 'json', summary: '', input: Type.Object({}), handle() { throw new Error('secret internals at /srv/x.ts:12') } })
    const response = await appWith(crashing).request('/t/crash', { method: 'POST', body: '{}', headers: { 'x-request-id': 'req-42' } })
    expect(response.status).toBe(500)
    const text = await response.text()
    expect(text).not.toContain('secret internals')
    const body = JSON.parse(text)
    // A deterministic failure presented as transient would only be retried into the same failure.
    expect(body).toMatchObject({ resCode: 0, resMsg: [{ messageKey: 'api.error.Internal', details: { requestId: 'req-42' }, retryable: false, recommendedAction: 'NONE' }] })
    const logged = lines.map((l) => JSON.parse(l)).find((l) => l.requestId === 'req-42' && l.err)
    expect(logged.err.stack).toContain('secret internals')
  })

  it('marks an unexpected failure retryable only when its cause is known to be transient (also wrapped)', async () => {
    const busy = defineHandler({ routes: ['/t/busy'], auth: 'anonymous', body: 'json', summary: '', input: Type.Object({}), handle() {
      throw new Error('query failed', { cause: Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }) })
    } })
    const response = await appWith(busy).request('/t/busy', { method: 'POST', body: '{}', headers: { 'x-request-id': 'req-43' } })
    expect(response.status).toBe(500)
    expect((await response.json()).resMsg[0]).toMatchObject({ messageKey: 'api.error.Internal', details: { requestId: 'req-43' }, retryable: true, recommendedAction: 'RETRY_LATER' })
  })

  it('answers StorageFull (507, FREE_DISK_SPACE) when a write found the disk full (SQLITE_FULL, ENOSPC; also wrapped)', async () => {
    for (const code of ['SQLITE_FULL', 'ENOSPC']) {
      const full = defineHandler({ routes: ['/t/full'], auth: 'anonymous', body: 'json', summary: '', input: Type.Object({}), handle() {
        throw new Error('insert failed', { cause: Object.assign(new Error('database or disk is full'), { code }) })
      } })
      const response = await appWith(full).request('/t/full', { method: 'POST', body: '{}', headers: { 'x-request-id': 'req-44' } })
      expect(response.status).toBe(507)
      expect((await response.json()).resMsg[0]).toMatchObject({
        messageKey: 'api.error.StorageFull', details: { requestId: 'req-44' }, retryable: true, recommendedAction: 'FREE_DISK_SPACE', retryAfterSeconds: 30,
      })
    }
  })

  it('passes a catalogue error through with its status and details', async () => {
    const failing = defineHandler({ routes: ['/t/fail'], auth: 'anonymous', body: 'json', summary: '', input: Type.Object({}), handle() { throw new ApiError('NotCreated', { details: { taskId: 't1' } }) } })
    const response = await appWith(failing).request('/t/fail', { method: 'POST', body: '{}' })
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ resCode: 0, resultCode: '1002', resMsg: [{ messageKey: 'api.error.NotCreated', details: { taskId: 't1' }, recommendedAction: 'CREATE_TASK' }] })
  })

  it('gives the handler the address the request arrived at (the server side of the socket), IPv4 also from a dual-stack listener', async () => {
    const where = defineHandler({ routes: ['/t/where'], auth: 'anonymous', body: 'json', summary: '', input: Type.Object({}), handle: (_input, ctx) => ({ local: ctx.localAddress, client: ctx.clientAddress }) })
    const app = appWith(where)
    for (const [hostname, url, expected] of [['127.0.0.1', '127.0.0.1', '127.0.0.1'], ['::', '127.0.0.1', '127.0.0.1'], ['::1', '[::1]', '::1']]) {
      const server = await new Promise<ReturnType<typeof serve>>((resolve) => { const s = serve({ fetch: app.fetch, port: 0, hostname }, () => resolve(s)) })
      try {
        const response = await fetch(`http://${url}:${(server.address() as AddressInfo).port}/t/where`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })
        expect((await response.json()).resData, hostname).toEqual({ local: expected, client: hostname === '::' ? '::ffff:127.0.0.1' : expected })
      } finally {
        await new Promise((resolve) => server.close(resolve))
      }
    }
  })

  it('sends a returned Response as it is', async () => {
    const file = defineHandler({ routes: ['/t/file'], auth: 'anonymous', body: 'none', methods: ['GET'], summary: '', input: Type.Object({}), handle: () => new Response('bytes', { headers: { 'content-type': 'text/plain' } }) })
    const response = await appWith(file).request('/t/file')
    expect(await response.text()).toBe('bytes')
  })
})

describe('Probe and ViewRoutes handlers', () => {
  let t: TestRuntime
  beforeAll(async () => {
    t = await createTestRuntime()
  })
  afterAll(async () => t.close())

  it('Probe reports liveness with the clock as a millisecond string', async () => {
    t.clock.set(1_700_000_000_123)
    expect(await Probe.handle({}, t.ctx())).toEqual({ alive: true, timestamp: '1700000000123' })
  })

  it('ViewRoutes lists the mounted routes with their authentication', async () => {
    const ctx = { ...t.ctx(), routes: () => [
      { path: '/v1/cwai/aihost/Probe', methods: ['GET', 'POST'] as const, auth: 'anonymous' as const, body: 'none' as const, bundle: 'aihost/Probe.mjs', summary: 'p' },
      { path: '/v1/cwai/aihost/ViewRoutes', methods: ['POST'] as const, auth: 'session' as const, body: 'json' as const, bundle: 'aihost/ViewRoutes.mjs', summary: 'v' },
    ].map((r) => ({ ...r, methods: [...r.methods] })) }
    const result = await ViewRoutes.handle({}, ctx)
    expect(result.total).toBe(2)
    expect(result.rows).toEqual([
      { path: '/v1/cwai/aihost/Probe', methods: ['GET', 'POST'], authenticated: false, auth: 'none', body: 'none', summary: 'p' },
      { path: '/v1/cwai/aihost/ViewRoutes', methods: ['POST'], authenticated: true, auth: 'mtk', body: 'json', summary: 'v' },
    ])
  })
})
