import { expect } from 'vitest'
import { Validator } from '@seriousme/openapi-schema-validator'
import { Ajv2020 } from 'ajv/dist/2020.js'
import type { DeviceProcess } from '../helpers/device.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { EVENT_KINDS } from '../../shared/events/kinds.ts'
import { mqttTopics, REGISTRATION_FIELDS } from '../../runtime/events/mqtt-topics.ts'

let device: DeviceProcess
let mtk: string
let mounted: { path: string; methods: string[]; authenticated: boolean; auth: string }[]

test.beforeAll(async ({ device: started, mtk: session }) => {
  device = started
  mtk = session
  const view = await device.post('/v1/cwai/aihost/ViewRoutes', {}, mtk)
  expect(view.body.resCode).toBe(1)
  // The documents describe the envelope routes; the tus endpoint (protocol: 'tus') speaks tus 1.0.0 and is described in README.md.
  mounted = view.body.resData.rows.filter((row: { protocol?: string }) => row.protocol !== 'tus')
})

const get = (path: string) => fetch(device.url + path)

test.describe('packaged interface documents (spec 4.11, 9)', () => {
  test('the HTTP document is public, v1.0, and has a section for every mounted route', async () => {
    const response = await get('/staticfile/httpInterface.html')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^text\/html/)
    const html = await response.text()
    expect(html).toContain('<title>HTTP interface v1.0</title>')
    expect(mounted.length).toBeGreaterThanOrEqual(5)
    for (const route of mounted) expect(html, route.path).toContain(`<h3>${route.path}</h3>`)
    const documented = [...html.matchAll(/<h3>([^<]+)<\/h3>/g)].map((m) => m[1]).sort()
    expect(documented).toEqual(mounted.map((r) => r.path).sort())
  })

  test('the OpenAPI 3.1 document validates and lists every mounted route with its methods and auth', async () => {
    const response = await get('/staticfile/openapi.json')
    expect(response.status).toBe(200)
    const spec = await response.json()
    expect(spec.openapi).toBe('3.1.0')
    const result = await new Validator().validate(spec)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(Object.keys(spec.paths).sort()).toEqual(mounted.map((r) => r.path).sort())
    for (const route of mounted) {
      const item = spec.paths[route.path]
      expect(Object.keys(item).sort(), route.path).toEqual(route.methods.map((m) => m.toLowerCase()).sort())
      for (const operation of Object.values<any>(item)) {
        // spec 5.2: only DoLogin and Probe are anonymous; OpenAPI says so with `security: []`.
        // The metrics route takes the mtk or the scrape token, media routes the mtk or a stream token.
        if (route.auth === 'mtk-or-scrape-token') expect(operation.security, route.path).toEqual([{ mtk: [] }, { scrapeToken: [] }])
        else if (route.auth === 'mtk-or-stream-token') expect(operation.security, route.path).toEqual([{ mtk: [] }, { streamToken: [] }])
        else if (route.authenticated) expect(operation.security, route.path).toBeUndefined()
        else expect(operation.security, route.path).toEqual([])
      }
    }
    expect(spec.components.securitySchemes.mtk).toEqual(expect.objectContaining({ type: 'apiKey', in: 'header', name: 'mtk' }))
    expect(spec.components.securitySchemes.scrapeToken).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }))
    expect(mounted.filter((r) => r.auth === 'mtk-or-scrape-token').map((r) => r.path)).toEqual(['/gtw/cwai/System/Metrics'])
    expect(mounted.filter((r) => r.auth === 'mtk-or-stream-token').map((r) => r.path).sort()).toEqual(['/gtw/cwai/File/Clip', '/gtw/cwai/LiveStream/overlay', '/gtw/cwai/LiveStream/play'])
    expect(spec.components.securitySchemes.streamToken).toEqual(expect.objectContaining({ type: 'apiKey', in: 'query', name: 'token' }))
  })

  test('every request schema in the OpenAPI document is valid JSON Schema 2020-12', async () => {
    const spec = await (await get('/staticfile/openapi.json')).json()
    const ajv = new Ajv2020({ strict: false })
    let schemas = 0
    for (const item of Object.values<any>(spec.paths)) {
      for (const operation of Object.values<any>(item)) {
        for (const content of Object.values<any>(operation.requestBody?.content ?? {})) {
          expect(() => ajv.compile(content.schema)).not.toThrow()
          schemas++
        }
      }
    }
    expect(schemas).toBeGreaterThan(0)
    // DoLogin's documented fields are its real input: account and the MD5 digest (spec 4.1).
    const login = spec.paths['/gtw/cwai/login/DoLogin'].post.requestBody.content['application/json'].schema
    expect(login.required.sort()).toEqual(['account', 'pwd'])
    expect(login.properties.pwd.pattern).toBeDefined()
  })

  test('the MQTT document is public, v1.0, and lists every topic, the registration fields and every event kind with its payload', async () => {
    const response = await get('/staticfile/mqttInterface.html')
    expect(response.status).toBe(200)
    const html = await response.text()
    expect(html).toContain('<title>MQTT interface v1.0</title>')
    const topics = mqttTopics('<topicPrefix>', '<clientId>')
    for (const topic of [topics.registration, topics.status, topics.request, topics.response, topics.event('<kind>')])
      expect(html, topic).toContain(`<code>${topic.replace(/</g, '&lt;').replace(/>/g, '&gt;')}</code>`)
    for (const field of Object.keys(REGISTRATION_FIELDS)) expect(html, `registration.${field}`).toContain(`<td><code>${field}</code></td>`)
    const documented = [...html.matchAll(/<section id="event-[^"]+"><h3>([^<]+)<\/h3>/g)].map((m) => m[1]).sort()
    expect(documented).toEqual(Object.keys(EVENT_KINDS).sort())
    for (const [kind, info] of Object.entries(EVENT_KINDS))
      for (const field of Object.keys(info.payload)) expect(html, `${kind}.${field}`).toContain(`<td><code>${field}</code></td>`)
  })

  test('static paths never leave their folder', async () => {
    for (const path of ['/staticfile/../functions/manifest.json', '/staticfile/%2e%2e/functions/manifest.json', '/staticfile//etc/passwd', '/console/..%2f..%2fpackage.json']) {
      const response = await get(path)
      expect(response.status, path).not.toBe(200)
      expect(await response.text(), path).not.toContain('"bundles"')
    }
  })
})

test.describe('document URL query (spec 4.11)', () => {
  const route = '/gtw/cwai/System/QueryInterfaceDocUrl'

  test('type 0 answers the HTTP document path, type 1 the MQTT document path', async () => {
    const http = await device.post(route, { type: 0 }, mtk)
    expect(http.body).toEqual(expect.objectContaining({ resCode: 1 }))
    expect(http.body.resData).toEqual({ type: 0, url: '/staticfile/httpInterface.html', version: 'v1.0' })
    const mqtt = await device.post(route, { type: 1 }, mtk)
    expect(mqtt.body.resData).toEqual({ type: 1, url: '/staticfile/mqttInterface.html', version: 'v1.0' })
    // The answered paths are served.
    expect((await get(http.body.resData.url)).status).toBe(200)
    expect((await get(mqtt.body.resData.url)).status).toBe(200)
  })

  test('needs mtk', async () => {
    const response = await device.post(route, { type: 0 })
    expect(response.status).toBe(401)
    expect(response.body.resMsg[0].messageKey).toBe('api.error.Unauthorized')
  })

  test('an unknown or missing type is InvalidParam naming the field', async () => {
    for (const body of [{ type: 2 }, {}, { type: 'http' }]) {
      const response = await device.post(route, body, mtk)
      expect(response.body.resCode, JSON.stringify(body)).toBe(0)
      expect(response.body.resMsg[0].messageKey).toBe('api.error.InvalidParam')
      expect(response.body.resMsg[0].details.field).toBe('/type')
    }
  })
})
