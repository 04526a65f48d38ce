/**
 * Every JSON route of the device, signed in, against hostile bodies (developers' guide "Bad
 * input", spec 2.7): malformed JSON, the wrong top-level type, prototype keys, deep nesting,
 * each field of the route's input schema set to a wrong type or an extreme value, and values
 * that pass the schema but carry paths, URLs, markup or the longest string allowed. Each must
 * be answered with the error envelope (messageKey and recommendedAction), never a 5xx other
 * than 503, and the device goes on answering.
 */
import { readdirSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { HandlerDefinition } from '../../shared/handler.ts'
import { startDevice, type DeviceProcess } from '../helpers/device.ts'

const functionsDir = path.resolve(import.meta.dirname, '../../functions')
/** Routes that change the machine itself (its network, its clock) or end the device: not for a sweep. */
const HOST_CHANGING = /\/network\/|SetTimeParam|FactoryReset|System\/Restart|System\/Upgrade|ChangePassword|Logout/

type Schema = Record<string, any>

/** The smallest body the schema accepts, as far as it can be told from the schema alone. */
function minimal(schema: Schema | undefined): unknown {
  if (!schema) return null
  if (schema.const !== undefined) return schema.const
  if (schema.enum) return schema.enum[0]
  if (schema.anyOf) return minimal(schema.anyOf[0])
  if (schema.default !== undefined) return schema.default
  switch (schema.type) {
    case 'object': return Object.fromEntries((schema.required ?? []).map((key: string) => [key, minimal(schema.properties?.[key])]))
    case 'string': return 'a'.repeat(Math.max(1, schema.minLength ?? 1))
    case 'integer': case 'number': return schema.minimum ?? (schema.exclusiveMinimum ?? -1) + 1
    case 'boolean': return false
    case 'array': return Array.from({ length: schema.minItems ?? 0 }, () => minimal(schema.items))
    default: return null
  }
}

/** Values the field's schema accepts that a hostile client would send. */
function hostileButValid(schema: Schema | undefined): unknown[] {
  if (!schema) return []
  if (schema.anyOf) return schema.anyOf.flatMap(hostileButValid)
  if (schema.type === 'string' && schema.enum === undefined && schema.const === undefined) {
    const max = schema.maxLength ?? 100_000
    return ['../../../../etc/passwd', '/etc/shadow', 'a/../../b', '%2e%2e%2f', '<script>alert(1)</script>', "'; DROP TABLE users; --",
      '🙂🙂🙂🙂', 'a'.repeat(max), 'http://169.254.169.254/latest', 'file:///etc/passwd', 'rtsp://user:pw@127.0.0.1:1/x']
      .map((value) => value.slice(0, max)).filter((value) => value.length >= (schema.minLength ?? 0))
  }
  if (schema.type === 'integer' || schema.type === 'number') return [schema.maximum, schema.minimum].filter((value) => value !== undefined)
  if (schema.type === 'array' && schema.maxItems !== undefined) return [Array.from({ length: schema.maxItems }, () => minimal(schema.items))]
  return []
}

/** Values of the wrong type or beyond any bound. */
const WRONG = ['', 'x'.repeat(100_000), -1e308, 1e308, 3.5, -1, true, null, {}, { a: { b: 1 } }, [], Array(10_000).fill('a'), '\u0000']

const definitions = await Promise.all(readdirSync(functionsDir, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts'))
  .map(async (file) => (await import(pathToFileURL(path.join(functionsDir, file)).href)).default as HandlerDefinition))
const routes = definitions.flatMap((definition) => definition.body === 'json' && definition.auth !== 'anonymous'
  ? definition.routes.filter((route) => !HOST_CHANGING.test(route)).map((route) => [route, definition] as const)
  : [])

describe('hostile bodies on every JSON route', () => {
  let device: DeviceProcess
  let mtk: string
  beforeAll(async () => {
    device = await startDevice()
    mtk = await device.adminToken()
  })
  afterAll(async () => {
    await device.stop()
    device.cleanup()
  })

  /** Sends `body`; returns what is wrong with the answer, or null. */
  async function answer(route: string, body: string): Promise<string | null> {
    const response = await fetch(device.url + route, { method: 'POST', headers: { 'content-type': 'application/json', mtk }, body, signal: AbortSignal.timeout(60_000) })
    const text = await response.text()
    if (response.status >= 500 && response.status !== 503) return `HTTP ${response.status}: ${text.slice(0, 300)}`
    if (!(response.headers.get('content-type') ?? '').includes('json')) return null
    const json = JSON.parse(text)
    if (json.resCode !== 0) return null
    const item = json.resMsg?.[0]
    if (!item?.messageKey || !item?.recommendedAction) return `no messageKey or recommendedAction: ${text.slice(0, 300)}`
    return null
  }

  it('covers the routes', () => {
    expect(routes.length).toBeGreaterThan(100)
  })

  it.each(routes)('%s', async (route, definition) => {
    const input = definition.input as Schema | undefined
    const base = minimal(input) as Record<string, unknown>
    const bodies = ['{not json', '[]', 'null', '"text"', '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}',
      '['.repeat(5000) + ']'.repeat(5000), JSON.stringify(base)]
    for (const [field, schema] of Object.entries(input?.properties ?? {}) as [string, Schema][]) {
      for (const value of WRONG) bodies.push(JSON.stringify({ ...base, [field]: value }))
      for (const value of hostileButValid(schema)) bodies.push(JSON.stringify({ ...base, [field]: value }))
    }
    const wrong: string[] = []
    for (const body of bodies) {
      const problem = await answer(route, body)
      if (problem) wrong.push(`${body.slice(0, 80)} → ${problem}`)
    }
    expect(wrong).toEqual([])
    const probe = await fetch(`${device.url}/v1/cwai/aihost/Probe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(probe.status).toBe(200)
  }, 300_000)
})
