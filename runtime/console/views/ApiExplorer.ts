import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import { ErrorPanel } from '../components/ErrorPanel.ts'

/** The generated interface document (spec 4.11, 9; docs/console-and-cli.md "Console, interface documents"). */
const OPENAPI_URL = '/staticfile/openapi.json'

interface Schema {
  type?: string | string[]
  properties?: Record<string, Schema>
  required?: string[]
  enum?: unknown[]
  const?: unknown
  anyOf?: Schema[]
  oneOf?: Schema[]
  default?: unknown
  description?: string
  $ref?: string
}
interface Operation { path: string; summary: string; schema: Schema | null; json: boolean }

/** A schema's fixed choices (an enum, or a union of constants), if it has them. */
const choicesOf = (s: Schema): unknown[] | null => s.enum ?? ((s.anyOf ?? s.oneOf)?.every((o) => 'const' in o) ? (s.anyOf ?? s.oneOf)!.map((o) => o.const) : null)
const typeOf = (s: Schema) => (Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type) ?? ((s.anyOf ?? s.oneOf) ? 'union' : 'any')

/** The operations of the document: POST routes with a JSON body can be sent from here. */
function operationsOf(doc: { paths: Record<string, Record<string, { summary?: string; requestBody?: { content?: Record<string, { schema?: Schema }> } }>>; components?: { schemas?: Record<string, Schema> } }): Operation[] {
  const resolve = (s: Schema | undefined) => (s?.$ref ? doc.components?.schemas?.[s.$ref.split('/').pop()!] : s) ?? null
  return Object.entries(doc.paths).map(([path, methods]) => {
    const post = methods.post
    const content = post?.requestBody?.content
    const json = !!post && (!content || 'application/json' in content)
    return { path, summary: (post ?? Object.values(methods)[0])?.summary ?? '', schema: resolve(content?.['application/json']?.schema), json }
  }).sort((a, b) => a.path.localeCompare(b.path))
}

/** A form value → the JSON value its schema asks for; undefined leaves the field out. */
function valueOf(schema: Schema, raw: string): unknown {
  if (raw === '') return undefined
  const type = typeOf(schema)
  const choices = choicesOf(schema)
  if (choices) return choices.find((c) => String(c) === raw)
  if (type === 'integer' || type === 'number') return Number(raw)
  if (type === 'boolean') return raw === 'true'
  if (type === 'string') return raw
  return JSON.parse(raw)
}

/**
 * Try the API: every route of the interface document with a form from its input schema and a
 * Send button, using the signed-in session (the console's own client, so its mtk).
 */
export function ApiExplorer({ client }: { client: DeviceClient }) {
  const [operations, setOperations] = useState<Operation[] | null>(null)
  const [loadError, setLoadError] = useState<unknown>(null)
  const [path, setPath] = useState('')
  const [values, setValues] = useState<Record<string, string>>({})
  const [busy, setBusy] = useState(false)
  const [answer, setAnswer] = useState<{ ok: true; data: unknown } | { ok: false; error: unknown } | null>(null)

  useEffect(() => {
    fetch(OPENAPI_URL).then((r) => r.json()).then((doc) => setOperations(operationsOf(doc)), setLoadError)
  }, [])

  const op = operations?.find((o) => o.path === path) ?? null
  const fields = Object.entries(op?.schema?.properties ?? {})
  let body: Record<string, unknown> | null = {}
  let bodyError: string | null = null
  for (const [name, schema] of fields) {
    try {
      const v = valueOf(schema, values[name] ?? '')
      if (v !== undefined) body[name] = v
    } catch {
      bodyError = `${name}: not valid JSON`
      body = null
      break
    }
  }

  const send = async (event: Event) => {
    event.preventDefault()
    if (!op || !body) return
    setBusy(true)
    setAnswer(null)
    try {
      setAnswer({ ok: true, data: await client.call(op.path, body) })
    } catch (e) {
      setAnswer({ ok: false, error: e })
    } finally {
      setBusy(false)
    }
  }

  return html`<main class="api" id="main">
    <h1 tabindex="-1">Try the API</h1>
    <div class="columns">
      <form class="panel stack" onSubmit=${send} aria-busy=${busy}>
        <${ErrorPanel} error=${loadError} context="Interface document" />
        <label>Route
          <select value=${path} data-testid="api-route" onChange=${(e: Event) => { setPath((e.target as HTMLSelectElement).value); setValues({}); setAnswer(null) }}>
            <option value="">Choose a route…</option>
            ${(operations ?? []).map((o) => html`<option value=${o.path} disabled=${!o.json}>${o.path}${o.json ? '' : ' (file or GET: see the documents)'}</option>`)}
          </select>
        </label>
        ${op ? html`<p class="hint" data-testid="api-summary">${op.summary}</p>` : null}
        ${fields.map(([name, schema]) => {
          const choices = choicesOf(schema)
          const type = typeOf(schema)
          const required = op?.schema?.required?.includes(name)
          const set = (e: Event) => setValues({ ...values, [name]: (e.target as HTMLInputElement).value })
          const label = html`${name}${required ? ' (required)' : ''} <span class="hint">${choices ? 'choice' : type}${schema.default !== undefined ? `, default ${JSON.stringify(schema.default)}` : ''}</span>`
          if (choices || type === 'boolean') {
            const options = choices ?? [true, false]
            return html`<label>${label}<select name=${name} value=${values[name] ?? ''} onChange=${set} data-field=${name}>
              <option value="">(not sent)</option>${options.map((c) => html`<option value=${String(c)}>${String(c)}</option>`)}</select></label>`
          }
          if (type === 'string' || type === 'integer' || type === 'number') {
            // No min/max attributes: the device judges the value, and its refusal is what an integrator wants to see.
            return html`<label>${label}<input name=${name} type=${type === 'string' ? 'text' : 'number'} value=${values[name] ?? ''} onInput=${set} data-field=${name} /></label>`
          }
          return html`<label>${label}<textarea name=${name} rows="3" value=${values[name] ?? ''} onInput=${set} data-field=${name} placeholder="JSON"></textarea></label>`
        })}
        ${op ? html`<details><summary>Request body</summary><pre class="raw-body" data-testid="api-body">${body ? JSON.stringify(body, null, 2) : bodyError}</pre></details>` : null}
        <div class="row"><button type="submit" disabled=${!op || !body || busy} data-testid="api-send">${busy ? 'Sending…' : 'Send'}</button></div>
      </form>
      <div class="panel" aria-live="polite">
        ${answer === null ? html`<p class="placeholder">The answer’s resData appears here.</p>`
          : answer.ok ? html`<h2>resData</h2><pre class="raw-body" data-testid="api-answer">${JSON.stringify(answer.data, null, 2)}</pre>`
          : html`<${ErrorPanel} error=${answer.error} context=${op?.path} />`}
      </div>
    </div>
  </main>`
}
