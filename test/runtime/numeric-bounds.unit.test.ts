import { readdirSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'
import { createApp } from '../../runtime/http/app.ts'
import { InFlight } from '../../runtime/http/inflight.ts'
import type { RouteTable } from '../../runtime/http/route-table.ts'
import { createLogger } from '../../runtime/log.ts'
import type { HandlerDefinition } from '../../shared/handler.ts'
import { catalogue } from '../../shared/errors/index.ts'
import { PipelineManifest } from '../../models/manifest-schema.ts'
import AlgorithmPage from '../../functions/algorithm/page.ts'
import LayoutList from '../../functions/algorithm-layout/list.ts'
import EventPage from '../../functions/event/EventPage.ts'

const functionsDir = path.resolve(import.meta.dirname, '../../functions')

/** JSON pointers of every number or integer in `schema` that lacks a lower or an upper bound. */
function unbounded(schema: unknown, at = ''): string[] {
  if (typeof schema !== 'object' || schema === null) return []
  const node = schema as Record<string, unknown>
  const found: string[] = []
  // A literal (`const`) is bounded by itself.
  if ((node.type === 'number' || node.type === 'integer') && node.const === undefined) {
    const low = node.minimum !== undefined || node.exclusiveMinimum !== undefined
    const high = node.maximum !== undefined || node.exclusiveMaximum !== undefined
    if (!low || !high) found.push(at || '/')
  }
  for (const [key, value] of Object.entries(node)) {
    if (Array.isArray(value)) value.forEach((item, index) => found.push(...unbounded(item, `${at}/${key}/${index}`)))
    else if (typeof value === 'object') found.push(...unbounded(value, `${at}/${key}`))
  }
  return found
}

describe('numeric inputs are bounded', () => {
  it('every number in every endpoint input schema and in the pipeline manifest has a minimum and a maximum', async () => {
    const files = readdirSync(functionsDir, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'))
    expect(files.length).toBeGreaterThan(40)
    const missing: string[] = []
    for (const file of files) {
      const definition = (await import(pathToFileURL(path.join(functionsDir, file)).href)).default as HandlerDefinition
      missing.push(...unbounded(definition.input).map((pointer) => `${file}${pointer}`))
    }
    missing.push(...unbounded(PipelineManifest).map((pointer) => `manifest${pointer}`))
    expect(missing).toEqual([])
  })
})

describe('a huge page number is the client’s mistake (spec 2.3, 2.7)', () => {
  let t: TestRuntime
  let app: ReturnType<typeof createApp>
  beforeAll(async () => {
    t = await createTestRuntime()
    // The routes as mounted, signed in or not: the input schema answers first.
    const definitions = [AlgorithmPage, LayoutList, EventPage].map((d) => ({ ...d, auth: 'anonymous' as const }))
    const table = {
      lookup: (p: string) => {
        const definition = definitions.find((d) => d.routes.includes(p))
        return definition && { hash: 'x', load: async () => definition, route: { path: p, methods: ['POST'], auth: 'anonymous', body: 'json', bundle: 'test', summary: '' } }
      },
      routes: () => [],
    } as unknown as RouteTable
    const log = createLogger('info', new Writable({ write: (_chunk, _e, done) => done() }))
    app = createApp({ ...t.runtime.services, log }, table, new InFlight())
  })
  afterAll(async () => t.close())

  const cases = ['/gtw/cwai/algorithm/page', '/gtw/cwai/algorithm/layout/list', '/gtw/cwai/Event/EventPage']
    .flatMap((route) => ['1e20', '1e308'].map((pageNum) => [route, pageNum] as const))
  it.each(cases)('%s with pageNum %s answers InvalidParam naming pageNum', async (route, pageNum) => {
    const response = await app.request(route, { method: 'POST', body: `{"pageNum":${pageNum}}`, headers: { 'content-type': 'application/json' } })
    expect(response.status).toBe(catalogue.InvalidParam.httpStatus)
    expect(await response.json()).toMatchObject({
      resCode: 0, resMsg: [{ messageKey: 'api.error.InvalidParam', retryable: false, recommendedAction: 'CHECK_REQUEST_PARAMETERS', details: { field: '/pageNum' } }],
    })
  })

  it('the largest page number allowed still answers an empty page', async () => {
    const response = await app.request('/gtw/cwai/algorithm/page', { method: 'POST', body: '{"pageNum":1000000,"pageSize":1000}', headers: { 'content-type': 'application/json' } })
    expect(await response.json()).toMatchObject({ resCode: 1, resData: { rows: [] } })
  })
})
