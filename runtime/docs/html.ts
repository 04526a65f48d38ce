import { catalogue } from '../../shared/errors/catalogue.ts'
import { categoryOf, DOCUMENT_VERSION, OPENAPI_PATH, type DocRoute, type JsonSchema, type MqttDoc } from './model.ts'

const escape = (value: unknown) =>
  String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

const anchor = (path: string) => path.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '')

const STYLE = `
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d232b;background:#fff}
header,main{max-width:1100px;margin:0 auto;padding:0 16px}
header{border-bottom:1px solid #d8dde3;padding-top:16px;padding-bottom:8px}
h1{font-size:1.5rem;margin:.2em 0}h2{margin-top:2em;border-bottom:1px solid #d8dde3}h3{margin-top:1.6em;font-family:ui-monospace,monospace;font-size:1rem;word-break:break-all}
table{border-collapse:collapse;width:100%;margin:.5em 0;display:block;overflow-x:auto}
th,td{border:1px solid #d8dde3;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f2f4f7}
code,pre{font-family:ui-monospace,monospace;font-size:.9em}pre{background:#f2f4f7;padding:8px;overflow-x:auto}
.badge{display:inline-block;border-radius:4px;padding:0 6px;margin-right:4px;font-size:.8em;background:#e4e9f0}
.anon{background:#fde7c8}nav ul{columns:2;padding-left:1.2em}@media(max-width:600px){nav ul{columns:1}}
`

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escape(title)}</title><style>${STYLE}</style></head>
<body>${body}</body></html>
`

interface Field { name: string; type: string; required: boolean; rules: string; description: string }

function typeOf(schema: JsonSchema): string {
  if (schema.const !== undefined) return `${JSON.stringify(schema.const)}`
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(' | ')
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as JsonSchema[]).map(typeOf).join(' | ')
  if (schema.type === 'array') return `${typeOf((schema.items ?? {}) as JsonSchema)}[]`
  return String(schema.type ?? 'any')
}

const RULE_KEYS = ['minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'format', 'minItems', 'maxItems', 'default']

/** Flattens an object schema into rows; nested objects become `parent.child`. */
export function fieldsOf(schema: JsonSchema, prefix = ''): Field[] {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>
  const required = new Set((schema.required ?? []) as string[])
  return Object.entries(properties).flatMap(([name, child]) => {
    const full = prefix + name
    const rules = RULE_KEYS.filter((k) => child[k] !== undefined).map((k) => `${k}: ${JSON.stringify(child[k])}`).join(', ')
    const row: Field = { name: full, type: typeOf(child), required: required.has(name), rules, description: String(child.description ?? '') }
    return child.type === 'object' && child.properties ? [row, ...fieldsOf(child, `${full}.`)] : [row]
  })
}

function fieldTable(schema: JsonSchema) {
  const fields = fieldsOf(schema)
  if (!fields.length) return '<p>No request fields (send <code>{}</code>).</p>'
  const rows = fields.map((f) => `<tr><td><code>${escape(f.name)}</code></td><td>${escape(f.type)}</td><td>${f.required ? 'yes' : 'no'}</td><td>${escape(f.rules)}</td><td>${escape(f.description)}</td></tr>`)
  return `<table><thead><tr><th>Field</th><th>Type</th><th>Required</th><th>Rules</th><th>Meaning</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
}

function example(route: DocRoute) {
  const method = route.methods.includes('POST') ? 'POST' : route.methods[0]!
  const header = route.auth === 'anonymous' ? '' : " -H 'mtk: <MTK>'"
  if (route.body === 'multipart') return `curl -X ${method} {base_url}${route.path}${header} -F file=@<FILE> ...`
  if (route.body === 'none') return `curl -X ${method} '{base_url}${route.path}'${header}`
  return `curl -X ${method} {base_url}${route.path}${header} -H 'content-type: application/json' -d '{...}'`
}

function routeSection(route: DocRoute) {
  const auth = route.auth === 'anonymous' ? '<span class="badge anon">no mtk</span>'
    : route.auth === 'scrape' ? '<span class="badge">mtk or Bearer METRICS_TOKEN</span>'
    : route.auth === 'stream' ? '<span class="badge">mtk or ?token= stream token</span>' : '<span class="badge">mtk</span>'
  const body = { json: 'application/json', multipart: 'multipart/form-data', none: 'no body (query parameters)' }[route.body]
  return `<section id="${anchor(route.path)}"><h3>${escape(route.path)}</h3>
<p>${route.methods.map((m) => `<span class="badge">${m}</span>`).join('')}${auth}<span class="badge">${escape(body)}</span></p>
<p>${escape(route.summary)}</p>${fieldTable(route.input)}<pre>${escape(example(route))}</pre></section>`
}

/** The packaged HTTP interface document (spec 9, v1.0). */
export function renderHttpDocument(routes: DocRoute[], info: { softwareVersion: string; generatedAt: string }) {
  const sorted = [...routes].sort((a, b) => a.path.localeCompare(b.path))
  const categories = [...new Set(sorted.map((r) => categoryOf(r.path)))].sort()
  const nav = `<nav><ul>${sorted.map((r) => `<li><a href="#${anchor(r.path)}"><code>${escape(r.path)}</code></a></li>`).join('')}</ul></nav>`
  const sections = categories.map((c) => `<h2>${escape(c)}</h2>${sorted.filter((r) => categoryOf(r.path) === c).map(routeSection).join('')}`).join('')
  const errors = Object.values(catalogue).map((e) => `<tr><td><code>${escape(e.messageKey)}</code></td><td>${escape(e.msgCode)}</td><td>${e.httpStatus}</td><td>${e.retryable ? 'yes' : 'no'}</td><td><code>${escape(e.recommendedAction)}</code></td><td>${escape(e.msgText)}</td></tr>`).join('')
  return page(`HTTP interface ${DOCUMENT_VERSION}`, `<header><h1>HTTP interface <small>${DOCUMENT_VERSION}</small></h1>
<p>Software ${escape(info.softwareVersion)} · generated ${escape(info.generatedAt)} from the route table and the handlers' input schemas · ${sorted.length} routes · also as <a href="${OPENAPI_PATH}">OpenAPI 3.1</a></p></header>
<main>
<h2>Conventions</h2>
<ul>
<li>All endpoints use POST unless listed otherwise; bodies are JSON unless multipart is stated (spec 4).</li>
<li>Every request except those marked <span class="badge anon">no mtk</span> carries the header <code>mtk: &lt;MTK&gt;</code> from <code>DoLogin</code>; a missing or expired token answers HTTP 401 (spec 5).</li>
<li>The password travels as its 32-hex MD5 digest (spec 4.1).</li>
<li>Every response is the envelope <code>{resCode, resMsg, resultCode, resultMsg, resData}</code>; success is <code>resCode: 1</code>. A failure carries message items <code>{msgCode, msgText, messageKey, details, retryable, retryAfterSeconds?, recommendedAction}</code> (spec 2.1, 2.7).</li>
<li>Body limits: JSON 1 MB, multipart 10 MB, upload chunk bounded by the live <code>maxChunkSize</code>; beyond them HTTP 413 <code>HTTP_BODY_TOO_LARGE</code> (spec 8).</li>
</ul>
<h2>Routes</h2>${nav}${sections}
<h2>Errors</h2>
<table><thead><tr><th>messageKey</th><th>msgCode</th><th>HTTP</th><th>Retryable</th><th>recommendedAction</th><th>Meaning</th></tr></thead><tbody>${errors}</tbody></table>
</main>`)
}

/** The packaged MQTT interface document (spec 9, v1.0). */
export function renderMqttDocument(mqtt: MqttDoc | null, info: { softwareVersion: string; generatedAt: string }) {
  const header = `<header><h1>MQTT interface <small>${DOCUMENT_VERSION}</small></h1>
<p>Software ${escape(info.softwareVersion)} · generated ${escape(info.generatedAt)} from the event and topic definitions</p></header>`
  if (!mqtt) {
    // Marked place: this build has no event/topic definitions (shared/events/kinds.ts, runtime/events/mqtt-topics.ts).
    return page(`MQTT interface ${DOCUMENT_VERSION}`, `${header}<main><h2>Topics</h2><p id="mqtt-not-built">This build contains no MQTT channel: no topics or event kinds are defined.</p></main>`)
  }
  const topics = Object.entries(mqtt.topics).map(([name, topic]) => `<tr><td>${escape(name)}</td><td><code>${escape(topic)}</code></td></tr>`).join('')
  const kinds = mqtt.eventKinds.map((k) => `<section id="event-${anchor(k.kind)}"><h3>${escape(k.kind)}</h3>
<p><span class="badge">source: ${escape(k.source)}</span>${k.alarm ? '<span class="badge anon">alarm</span>' : ''}</p><p>${escape(k.doc)}</p>
<table><thead><tr><th>Payload field</th><th>Type and meaning</th></tr></thead><tbody>${Object.entries(k.payload).map(([f, m]) => `<tr><td><code>${escape(f)}</code></td><td>${escape(m)}</td></tr>`).join('')}</tbody></table></section>`).join('')
  return page(`MQTT interface ${DOCUMENT_VERSION}`, `${header}<main>
<h2>Topics</h2>
<p><code>&lt;topicPrefix&gt;</code> and <code>&lt;clientId&gt;</code> are the MQTT settings of the device.</p>
<table><thead><tr><th>Topic</th><th>Pattern</th></tr></thead><tbody>${topics}</tbody></table>
<h2>Registration</h2>
<p>Once connected the device publishes, retained with QoS 1, its registration on the registration topic and <code>{"state":"online","clientId"}</code> on the status topic; its last will (and a clean stop) sets the status to <code>{"state":"offline","clientId"}</code>. Several devices on one broker are listed from these retained messages.</p>
<table><thead><tr><th>Registration field</th><th>Type and meaning</th></tr></thead><tbody>${Object.entries(mqtt.registration).map(([f, m]) => `<tr><td><code>${escape(f)}</code></td><td>${escape(m)}</td></tr>`).join('')}</tbody></table>
<h2>Requests</h2>
<p>A request published to the request topic is routed into the same handlers as HTTP, with a trusted internal transport (spec 5.6): the body is <code>{requestId, path, body}</code>, the answer on the response topic is <code>{requestId, path, status, envelope}</code>. The paths and request fields are those of the <a href="/staticfile/httpInterface.html">HTTP interface</a>; multipart routes (uploads) and file responses are served over HTTP only.</p>
<h2>Events</h2>
<p>Each event is published to its event topic with QoS 1 as <code>{id, kind, time, source, payload}</code>.</p>
${kinds}
</main>`)
}
