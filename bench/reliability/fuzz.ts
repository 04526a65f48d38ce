import { readFileSync } from 'node:fs'
import path from 'node:path'
import fc from 'fast-check'
import { md5Hex } from '../../shared/auth/password.ts'
import { CHANGED_PASSWORD, startDevice, type DeviceProcess } from '../../test/helpers/device.ts'
import { compileSchema } from '../../shared/schema/validate.ts'
import { ROOT, envelopeViolation, send, type Answer } from './lib.ts'
import { hugeNumbers, invalid, nastyStrings, nested, valid, type Schema } from './schema-arbitrary.ts'
import { hostileRequests } from './hostile.ts'

/**
 * Routes that change global state destructively when their input is valid (the device
 * restarts or installs, the session or password goes, settings change): fuzzed only with
 * input that is certainly invalid, and every such request must be refused.
 */
export const INVALID_ONLY = new Set([
  '/gtw/cwai/System/Restart', '/gtw/cwai/System/Upgrade', '/gtw/cwai/login/ChangePassword', '/gtw/cwai/login/Logout',
  '/gtw/cwai/System/SetHttpParam', '/gtw/cwai/System/SetMqttParam',
  '/gtw/cwai/System/Restore', '/gtw/cwai/System/FactoryReset',
])

// uploadTemp's fields arrive as multipart form fields, outside its (empty) JSON input schema (spec 4.5).
const UPLOAD_FIELDS: Schema = {
  type: 'object',
  required: ['purpose', 'chunkIndex', 'totalChunks', 'totalSize', 'chunkSize'],
  properties: {
    purpose: { enum: ['model', 'algorithm', 'image', 'upgrade'] },
    chunkIndex: { type: 'integer', minimum: 0, maximum: 3 },
    totalChunks: { type: 'integer', minimum: 1, maximum: 4 },
    totalSize: { type: 'integer', minimum: 1, maximum: 4096 },
    chunkSize: { type: 'integer', minimum: 1, maximum: 4096 },
    sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    clientRequestId: { type: 'string', minLength: 1, maxLength: 64 },
    uploadId: { type: 'string', minLength: 1, maxLength: 64 },
  },
}

interface Route {
  path: string
  auth: string
  body: 'json' | 'multipart' | 'none'
  methods: string[]
  schema: Schema
}

/** Every mounted route of the build's manifest (dist/functions/manifest.json) with its handler's input schema. */
export async function loadRoutes(): Promise<Route[]> {
  const manifest = JSON.parse(readFileSync(path.join(ROOT, 'dist/functions/manifest.json'), 'utf8'))
  const routes: Route[] = []
  for (const [route, entry] of Object.entries<any>(manifest.routes)) {
    const definition = (await import(path.join(ROOT, manifest.bundles[entry.bundle].source))).default
    routes.push({ path: route, auth: entry.auth, body: entry.body, methods: entry.methods, schema: definition.input as Schema })
  }
  return routes
}

/** One request the fuzzer sends: how the body is broken, and the raw request. */
interface Case {
  kind: string
  method: string
  query?: Record<string, string>
  headers: Record<string, string>
  body?: string | FormData
  /** Certainly invalid for the route: it must be refused. */
  mustRefuse: boolean
}

const json = { 'content-type': 'application/json' }

function bodyCases(route: Route): fc.Arbitrary<Case>[] {
  const schema = route.body === 'multipart' ? UPLOAD_FIELDS : route.schema
  const objectSchema = schema.type === 'object'
  const hasProperties = Object.keys(schema.properties ?? {}).length > 0
  // A route without a body (Probe) may ignore whatever is sent.
  const post = (kind: string, body: string, mustRefuse: boolean, headers: Record<string, string> = json): Case => ({ kind, method: 'POST', headers, body, mustRefuse: mustRefuse && route.body !== 'none' })
  const destructive = INVALID_ONLY.has(route.path)
  const cases: fc.Arbitrary<Case>[] = []

  // Certainly invalid: JSON syntax, wrong top-level type, wrong content type, deep nesting.
  // (An empty body is `{}` by design, runtime/http/dispatch.ts: not among them.)
  cases.push(fc.constantFrom(' {', '{"a":', '{"a":1,}', "{'a':1}", '{"a":NaN}', '{"a":Infinity}', '\ufeff{}', '{"a":1}{"b":2}', '\u0000', 'undefined', '{"a":"\\ud800"', '{"a":01}')
    .map((text) => post('invalid JSON', text, true)))
  if (objectSchema) {
    cases.push(fc.constantFrom('null', '[]', '123', '"text"', 'true', '[{}]', '1e308').map((text) => post('top-level not an object', text, true)))
    cases.push(fc.constantFrom<Record<string, string>>(
      { 'content-type': 'text/plain' }, { 'content-type': 'application/x-www-form-urlencoded' }, { 'content-type': 'multipart/form-data' },
      { 'content-type': 'application/xml' }, { 'content-type': 'application/json; charset=utf-16' }, {},
    ).map((headers) => post('wrong content type', route.body === 'multipart' ? '{}' : '<a>1</a>', true, headers)))
    cases.push(fc.constantFrom(2_000, 20_000, 100_000).map((depth) => post('deep nesting (top level)', '['.repeat(depth) + '1' + ']'.repeat(depth), true)))
  }
  // The device's own validator decides what is invalid: semantic checks come on top of it.
  const validates = (value: unknown) => compileSchema(schema as object)(structuredClone(value))
  if (hasProperties && route.body === 'json') {
    const properties = schema.properties!
    cases.push(fc.tuple(valid(schema), fc.constantFrom(...Object.keys(properties)))
      .chain(([good, key]) => invalid(properties[key]!).map((bad) => ({ ...(good as object), [key]: bad })))
      .filter((body) => !validates(body))
      .map((body) => post('invalid field', JSON.stringify(body), true)))
  }
  if (schema.additionalProperties === false) {
    cases.push(fc.tuple(valid(schema), fc.constantFrom('zzExtra', 'resCode', 'mtk', 'isAdmin')).map(([good, key]) => post('unknown property', JSON.stringify({ ...(good as object), [key]: 1 }), true)))
  }
  if (destructive) return cases

  // Valid input, then valid input broken in ways the route may accept (its schema is open) or must refuse.
  if (route.body === 'multipart') {
    cases.push(fc.tuple(valid(UPLOAD_FIELDS), fc.uint8Array({ minLength: 0, maxLength: 2048 }), fc.boolean()).map(([fields, bytes, broken]) => {
      const form = new FormData()
      for (const [name, value] of Object.entries(fields as Record<string, unknown>)) form.append(name, broken && name === 'chunkIndex' ? 'x' : String(value))
      form.append('file', new Blob([bytes]), 'fuzz.bin')
      return { kind: broken ? 'multipart, broken field' : 'multipart', method: 'POST', headers: {}, body: form, mustRefuse: broken }
    }))
    return cases
  }
  if (route.body === 'none') {
    const props = Object.keys(schema.properties ?? {})
    const query = props.length
      ? fc.oneof(valid(schema).map((v) => Object.fromEntries(Object.entries(v as object).map(([k, x]) => [k, String(x)]))),
        fc.dictionary(fc.constantFrom(...props, '__proto__', 'constructor'), fc.oneof(nastyStrings, fc.constant('a'.repeat(5000)))))
      : fc.dictionary(fc.constantFrom('a', '__proto__', 'constructor'), nastyStrings, { maxKeys: 2 })
    cases.push(fc.tuple(query, fc.constantFrom(...route.methods, 'PUT', 'DELETE')).map(([q, method]) => ({ kind: 'query', method, query: q, headers: {}, mustRefuse: false })))
    return cases
  }
  const base = valid(schema).filter(validates)
  cases.push(base.map((v) => post('valid', JSON.stringify(v), false)))
  cases.push(fc.tuple(base, fc.constantFrom('__proto__', 'constructor', 'prototype'), fc.constantFrom('{"isAdmin":true,"polluted":1}', '{"prototype":{"polluted":1}}', 'null', '1'))
    .map(([v, key, inner]) => {
      const text = JSON.stringify(v)
      const spliced = text === '{}' ? `{"${key}":${inner}}` : `{"${key}":${inner},${text.slice(1)}`
      return post('prototype key', spliced, false)
    }))
  cases.push(fc.tuple(base, fc.constantFrom(...(hasProperties ? Object.keys(schema.properties!) : ['a'])), fc.oneof(hugeNumbers, nastyStrings, fc.constantFrom(200, 2_000).map((d) => nested(d, 'object'))))
    .map(([v, key, value]) => post('hostile value', JSON.stringify({ ...(v as object), [key]: value }), false)))
  cases.push(fc.tuple(base, fc.string({ unit: 'binary', minLength: 1, maxLength: 16 }), fc.anything({ maxDepth: 2 })).map(([v, key, value]) => post('extra property', JSON.stringify({ [key]: value ?? null, ...(v as object) }), false)))
  return cases
}

function caseArbitrary(route: Route): fc.Arbitrary<Case> {
  const request = (kind: string, headers: Record<string, string>): Case => ({ kind, method: route.methods[0]!, headers: { ...json, ...headers }, body: route.methods[0] === 'GET' ? undefined : '{}', mustRefuse: true })
  // A few requests with headers beyond the HTTP layer's limit (16 KB: 431 with the envelope)
  // and, where a session is needed, with a missing or forged mtk (401, nothing run).
  const rare = [fc.constantFrom(17_000, 64_000).map((size) => request('oversized header', { 'x-pad': 'a'.repeat(size) }))]
  if (route.auth !== 'anonymous' && route.auth !== 'scrape') {
    rare.push(fc.constantFrom('', 'x', 'a'.repeat(4096), '00000000-0000-0000-0000-000000000000', '\u00ff').map((mtk) => request('forged mtk', { 'x-forged-mtk': mtk })))
  }
  // One case in ten is a rare one (nested weighted oneofs lean towards their first option).
  const body = fc.oneof(...bodyCases(route))
  return fc.nat(9).chain((n) => (n === 0 ? fc.oneof(...rare) : body))
}

async function signIn(device: DeviceProcess): Promise<string> {
  const login = await device.post('/gtw/cwai/login/DoLogin', { account: 'admin', pwd: md5Hex(CHANGED_PASSWORD) })
  if (login.body.resCode !== 1) throw new Error(`sign-in again failed: ${JSON.stringify(login.body)}`)
  return login.body.resData.mtk
}

/** State a refused request must not change (spec 2.1: a failure has no effect). */
async function snapshot(device: DeviceProcess, mtk: string, taskIds: Set<string>): Promise<Record<string, unknown>> {
  const ask = async (route: string, body: unknown = {}) => {
    const answer = await device.post(route, body, mtk)
    if (answer.body?.resCode !== 1) throw new Error(`state read ${route} failed: ${JSON.stringify(answer.body).slice(0, 300)}`)
    return answer.body.resData
  }
  const [capabilities, algorithms, models, layouts, webhooks, mqtt, tasks] = await Promise.all([
    ask('/gtw/cwai/atomic/model/uploadCapabilities'),
    ask('/gtw/cwai/algorithm/page', { pageSize: 1000 }),
    ask('/gtw/cwai/atomic/Model/list', { pageSize: 200 }),
    ask('/gtw/cwai/algorithm/layout/list', { pageSize: 1000 }),
    ask('/gtw/cwai/System/QueryHttpParam'),
    ask('/gtw/cwai/System/QueryMqttParam'),
    Promise.all([...taskIds].sort().map(async (taskId) => [taskId, (await device.post('/v1/cwai/aihost/QueryTaskStatus', { taskId }, mtk)).body.resCode])),
  ])
  return {
    reservedBySessionsBytes: capabilities.reservedBySessionsBytes,
    activeSessions: capabilities.activeSessions,
    algorithms: algorithms.rows.map((r: any) => `${r.algorithmId}@${r.version}/${r.updateTime ?? ''}`),
    models: models.rows.map((r: any) => `${r.modelId}@${r.updatedAt}`),
    layouts: JSON.stringify(layouts.rows),
    webhooks,
    mqtt,
    tasks,
  }
}

export interface FuzzFigures {
  routes: number
  invalidOnlyRoutes: string[]
  requests: number
  refused: number
  accepted: number
  byKind: Record<string, number>
  byStatus: Record<string, number>
  violations: { route: string; kind: string; request: string; problem: string }[]
  seed: number
  runsPerRoute: number
  durationMs: number
}

export async function runFuzz(options: { runsPerRoute: number; seed: number; log: (line: string) => void; routes?: string }): Promise<FuzzFigures> {
  const started = Date.now()
  // `--routes PTaskCancle,DownloadLog`: only the routes whose path contains one of the names.
  const only = options.routes?.split(',').filter(Boolean) ?? []
  const routes = (await loadRoutes()).filter((r) => only.length === 0 || only.some((name) => r.path.includes(name)))
  const device = await startDevice({ env: { LOG_LEVEL: 'info' } })
  const figures: FuzzFigures = { routes: routes.length, invalidOnlyRoutes: [...INVALID_ONLY], requests: 0, refused: 0, accepted: 0, byKind: {}, byStatus: {}, violations: [], seed: options.seed, runsPerRoute: options.runsPerRoute, durationMs: 0 }
  try {
    let mtk = await device.adminToken()
    // A task that exists throughout: refused requests must leave it (and everything else) in place.
    const canary = 'reliability-canary'
    await device.post('/gtw/cwai/aihost/PTaskCreate', { taskId: canary, algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) }, mtk)
    const taskIds = new Set([canary])
    let state = await snapshot(device, mtk, taskIds)

    for (const route of routes) {
      let routeViolations = 0
      const check = async (c: Case): Promise<boolean> => {
        const url = new URL(device.url + route.path)
        for (const [k, v] of Object.entries(c.query ?? {})) url.searchParams.set(k, v)
        const { 'x-forged-mtk': forged, ...headers } = c.headers
        if (forged !== undefined) { if (forged) headers.mtk = forged } else if (route.auth !== 'anonymous') headers.mtk = mtk
        let answer: Answer
        try {
          answer = await send(url.href, { method: c.method, headers, body: c.method === 'GET' || c.method === 'HEAD' ? undefined : c.body })
        } catch (error) {
          answer = { status: 0, body: `no answer: ${(error as Error).message}`, contentType: '' }
        }
        figures.requests++
        figures.byKind[c.kind] = (figures.byKind[c.kind] ?? 0) + 1
        figures.byStatus[answer.status] = (figures.byStatus[answer.status] ?? 0) + 1
        // Files (exports, overview pictures, metrics) answer a success outside the envelope.
        const plain = answer.status >= 200 && answer.status < 300 && !answer.contentType.includes('json')
        const accepted = answer.body?.resCode === 1 || plain
        if (accepted) figures.accepted++
        else figures.refused++
        const problems: string[] = []
        const envelope = answer.status === 0 ? String(answer.body) : envelopeViolation(answer, plain)
        if (envelope) problems.push(envelope)
        if (c.mustRefuse && accepted) problems.push(`accepted input that must be refused: ${JSON.stringify(answer.body).slice(0, 200)}`)
        if (accepted && route.path.endsWith('PTaskCreate')) {
          try { taskIds.add(JSON.parse(String(c.body)).taskId ?? JSON.parse(String(c.body)).algorithmCode) } catch { /* not ours to parse */ }
        }
        let after: Record<string, unknown> = await snapshot(device, mtk, taskIds).catch((error: Error) => ({ error: error.message }))
        if (String(after.error ?? '').includes('api.error.Unauthorized')) {
          // The session went (a Logout or ChangePassword got through): say so, sign in again, go on.
          problems.push(`the suite's session was revoked: ${String(after.error).slice(0, 200)}`)
          mtk = await signIn(device)
          after = await snapshot(device, mtk, taskIds).catch((error: Error) => ({ error: error.message }))
        }
        if ('error' in after) problems.push(`state could not be read afterwards: ${String(after.error).slice(0, 200)}`)
        else {
          if (!accepted) {
            for (const key of Object.keys(state)) {
              const was = JSON.stringify(state[key]); const now = JSON.stringify(after[key])
              if (was !== now) problems.push(`refused request changed ${key}: ${was.slice(0, 200)} -> ${now?.slice(0, 200)}`)
            }
          }
          state = after
        }
        if (device.process.exitCode !== null) problems.push(`device exited with ${device.process.exitCode}`)
        if (problems.length === 0) return true
        routeViolations++
        const shown = typeof c.body === 'string' ? c.body.slice(0, 300) : c.body ? '[multipart]' : JSON.stringify(c.query)
        figures.violations.push({ route: route.path, kind: c.kind, request: `${c.method} ${JSON.stringify(headers).slice(0, 120)} ${shown}`, problem: problems.join('; ') })
        if (device.process.exitCode !== null) throw new Error(`device exited during ${route.path}`)
        return true // keep going: every violation is recorded, the run stays bounded
      }
      await fc.assert(fc.asyncProperty(caseArbitrary(route), check), { numRuns: options.runsPerRoute, seed: options.seed, endOnFailure: true })
      options.log(`fuzz ${route.path}: ${options.runsPerRoute} cases${routeViolations ? `, ${routeViolations} violations` : ''}`)
    }
    // Hand-made cases: HTTP framing, a password flood, MQTT files while disabled, log ids (hostile.ts).
    const hostile = await hostileRequests(device, mtk)
    figures.requests += hostile.requests
    figures.byKind.hostile = hostile.requests
    for (const problem of hostile.problems) figures.violations.push({ route: '(hostile)', kind: 'hostile', request: problem.split(':')[0]!, problem })
    options.log(`fuzz hostile requests: ${hostile.requests}, ${hostile.problems.length} problems`)
    if (device.process.exitCode !== null) figures.violations.push({ route: '(hostile)', kind: 'hostile', request: '-', problem: `device exited with ${device.process.exitCode}` })
  } finally {
    figures.durationMs = Date.now() - started
    await device.stop()
    device.cleanup()
  }
  return figures
}
