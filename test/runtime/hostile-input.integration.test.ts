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
import { expect } from 'vitest'
import type { HandlerDefinition } from '../../shared/handler.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import type { DeviceProcess } from '../helpers/device.ts'
import { TUS_PATH } from '../../runtime/uploads/tus.ts'

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
const routesOf = (body: HandlerDefinition['body']) => definitions.flatMap((definition) => definition.body === body && definition.auth !== 'anonymous'
  ? definition.routes.filter((route) => !HOST_CHANGING.test(route)).map((route) => [route, definition] as const)
  : [])
const routes = routesOf('json')
/** GET routes (media, files, metrics): their input is the query string. */
const getRoutes = routesOf('none')
const HOSTILE_QUERY = ['../../../../etc/passwd', '%2e%2e%2f%2e%2e%2fetc%2fpasswd', '%00', 'a'.repeat(8000), '-1', '1e308', '', 'http://169.254.169.254/']
const HOSTILE_RANGES = ['bytes=-0', 'bytes=999999999999999999999-', 'bytes=0-0,1-1,2-2', 'bytes=abc', 'items=0-1']

test.describe('hostile input on every signed-in route', () => {
  let device: DeviceProcess
  let mtk: string
  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
  })

  /** Sends `body` (or a GET of `route` with its query); returns what is wrong with the answer, or null. */
  async function answer(route: string, body: string | null, headers: Record<string, string> = {}): Promise<string | null> {
    const response = await fetch(device.url + route, {
      method: body === null ? 'GET' : 'POST', headers: { 'content-type': 'application/json', mtk, ...headers }, ...(body === null ? {} : { body }), signal: AbortSignal.timeout(60_000),
    })
    const text = await response.text()
    if (response.status >= 500 && response.status !== 503) return `HTTP ${response.status}: ${text.slice(0, 300)}`
    // Media and files answer in their own types (a log file is JSON lines); errors are the envelope.
    if (!(response.headers.get('content-type') ?? '').startsWith('application/json')) return null
    const json = JSON.parse(text)
    if (json.resCode !== 0) return null
    const item = json.resMsg?.[0]
    if (!item?.messageKey || !item?.recommendedAction) return `no messageKey or recommendedAction: ${text.slice(0, 300)}`
    return null
  }

  test('covers the routes', () => {
    expect(routes.length).toBeGreaterThan(100)
    expect(getRoutes.length).toBeGreaterThan(5)
  })

  test('the multipart chunk upload: broken forms, hostile file names and field values', async () => {
    const route = '/gtw/cwai/atomic/model/uploadTemp'
    const form = (fields: Record<string, string>, filename: string) => {
      const data = new FormData()
      for (const [name, value] of Object.entries(fields)) data.append(name, value)
      data.append('file', new Blob([Buffer.from('abc')]), filename)
      return data
    }
    const fields = { purpose: 'image', chunkIndex: '0', totalChunks: '1', totalSize: '3', chunkSize: '3' }
    const multipart = (boundary: string | null, body: string) => ({ body, headers: { 'content-type': `multipart/form-data${boundary ? `; boundary=${boundary}` : ''}` } })
    const raw = [
      multipart(null, 'garbage'),
      multipart('b0undary', 'no boundary in here'),
      multipart('b0undary', '--b0undary\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nimage'),
      multipart('b0undary', `--b0undary\r\nContent-Disposition: form-data; name="file"; filename="x"\r\n\r\n${'a'.repeat(1000)}\r\n--b0undary--\r\n`),
      multipart('b0undary', `--b0undary\r\nContent-Disposition: form-data; name="${'n'.repeat(20_000)}"\r\n\r\nv\r\n--b0undary--\r\n`),
      multipart('x'.repeat(500), '--x\r\n'),
    ]
    const forms = [
      ...['../../../../tmp/evil', '/etc/passwd', 'a\u0000b', '', 'x'.repeat(5000)].map((name) => form(fields, name)),
      ...[['chunkIndex', '-1'], ['chunkIndex', '1e3'], ['totalSize', '99999999999999999999'], ['totalChunks', '0'], ['purpose', '../x'], ['chunkSize', '0']]
        .map(([name, value]) => form({ ...fields, [name!]: value! }, 'photo.jpg')),
    ]
    const wrong: string[] = []
    for (const request of [...raw, ...forms.map((body) => ({ body, headers: {} }))]) {
      const response = await fetch(device.url + route, { method: 'POST', headers: { mtk, ...request.headers }, body: request.body, signal: AbortSignal.timeout(60_000) })
      const text = await response.text()
      const json = JSON.parse(text)
      if (response.status >= 500 || (json.resCode === 0 && !(json.resMsg?.[0]?.messageKey && json.resMsg?.[0]?.recommendedAction))) wrong.push(`HTTP ${response.status}: ${text.slice(0, 200)}`)
    }
    expect(wrong).toEqual([])
  })

  test('the tus endpoint: hostile headers, metadata, offsets and upload ids', async () => {
    const endpoint = `${device.url}${TUS_PATH}`
    const tus = (url: string, method: string, headers: Record<string, string>, body?: Buffer) =>
      fetch(url, { method, headers: { 'tus-resumable': '1.0.0', mtk, ...headers }, ...(body ? { body: new Uint8Array(body) } : {}), signal: AbortSignal.timeout(60_000) })
    const b64 = (text: string) => Buffer.from(text).toString('base64')
    const creations: Record<string, string>[] = [
      { 'upload-length': '-1' }, { 'upload-length': '1e3' }, { 'upload-length': '99999999999999999999999' }, {},
      { 'upload-length': '3', 'upload-metadata': 'filename !!!notbase64' },
      { 'upload-length': '3', 'upload-metadata': `filename ${b64('../../../../tmp/evil')},purpose ${b64('image')}` },
      { 'upload-length': '3', 'upload-metadata': `purpose ${b64('../x')}` },
      { 'upload-length': '3', 'upload-metadata': `filename ${b64('x'.repeat(20_000))},purpose ${b64('image')}` },
      { 'upload-length': '3', 'upload-metadata': Array.from({ length: 2000 }, (_, i) => `k${i} ${b64('v')}`).join(',') },
    ]
    const wrong: string[] = []
    const check = (what: string, response: Response) => { if (response.status >= 500) wrong.push(`${what} → HTTP ${response.status}`) }
    for (const headers of creations) check(`POST ${JSON.stringify(headers).slice(0, 80)}`, await tus(endpoint, 'POST', headers))
    const created = await tus(endpoint, 'POST', { 'upload-length': '3', 'upload-metadata': `filename ${b64('a.jpg')},purpose ${b64('image')}` })
    expect(created.status).toBe(201)
    const upload = new URL(created.headers.get('location')!, endpoint).href
    const patch = { 'content-type': 'application/offset+octet-stream' }
    const patches: [string, Record<string, string>, Buffer][] = [
      ['offset ahead', { ...patch, 'upload-offset': '2' }, Buffer.from('abc')],
      ['negative offset', { ...patch, 'upload-offset': '-1' }, Buffer.from('abc')],
      ['past the length', { ...patch, 'upload-offset': '0' }, Buffer.from('abcdef')],
      ['wrong type', { 'content-type': 'text/plain', 'upload-offset': '0' }, Buffer.from('abc')],
      ['bad checksum header', { ...patch, 'upload-offset': '0', 'upload-checksum': 'md999 xyz' }, Buffer.from('abc')],
    ]
    for (const [what, headers, body] of patches) check(`PATCH ${what}`, await tus(upload, 'PATCH', headers, body))
    for (const id of ['..%2f..%2fetc%2fpasswd', '%00', 'x'.repeat(5000), '.']) {
      for (const method of ['HEAD', 'PATCH', 'DELETE']) check(`${method} ${id.slice(0, 20)}`, await tus(`${endpoint}/${id}`, method, method === 'PATCH' ? { ...patch, 'upload-offset': '0' } : {}, method === 'PATCH' ? Buffer.from('a') : undefined))
    }
    expect(wrong).toEqual([])
    // The upload is still whole and usable after all of it.
    const head = await tus(upload, 'HEAD', {})
    expect([head.status, head.headers.get('upload-length')]).toEqual([200, '3'])
  })

  test.each(getRoutes)('GET %s', async (route, definition) => {
    const fields = Object.keys((definition.input as Schema | undefined)?.properties ?? {})
    const requests: [string, Record<string, string>][] = [[route, {}], [`${route}?${fields.map((f) => `${f}=a&${f}=b`).join('&')}`, {}]]
    for (const field of fields) for (const value of HOSTILE_QUERY) requests.push([`${route}?${field}=${value.startsWith('%') ? value : encodeURIComponent(value)}`, {}])
    for (const range of HOSTILE_RANGES) requests.push([`${route}?${fields.map((f) => `${f}=1`).join('&')}`, { range }])
    const wrong: string[] = []
    for (const [url, headers] of requests) {
      const problem = await answer(url, null, headers)
      if (problem) wrong.push(`${url.slice(0, 100)} ${JSON.stringify(headers)} → ${problem}`)
    }
    expect(wrong).toEqual([])
  }, 300_000)

  test.each(routes)('%s', async (route, definition) => {
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
