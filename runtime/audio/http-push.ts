import { createHash, randomBytes } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { connect } from 'node:net'

/**
 * The `http-push` protocol of audio columns (docs/audio.md "Audio"): the whole file in one HTTP
 * request (POST or PUT, Content-Type of its format, Content-Length). With credentials the
 * request carries HTTP Basic; a column that answers 401 with a Digest challenge (RFC 7616,
 * MD5, as Axis speakers do) gets the request again with Digest.
 */

export interface PushTarget {
  url: string
  method: 'POST' | 'PUT' | 'HEAD'
  username: string | null
  password: string | null
}

export interface PushAnswer {
  status: number
  timeMs: number
}

const md5 = (text: string) => createHash('md5').update(text).digest('hex')

/** `Digest realm="x", nonce="y", qop="auth"` → its parameters (null when not a Digest challenge). */
export function parseDigestChallenge(header: string | null): Record<string, string> | null {
  if (!header || !/^\s*Digest\s/i.test(header)) return null
  const params: Record<string, string> = {}
  for (const m of header.replace(/^\s*Digest\s+/i, '').matchAll(/([a-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/gi))
    params[m[1]!.toLowerCase()] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3]!
  return params.nonce && params.realm !== undefined ? params : null
}

/** The Authorization header answering a Digest challenge for one request (RFC 7616 3.4, MD5). */
export function digestAuthorization(challenge: Record<string, string>, target: { method: string; url: string; username: string; password: string }, cnonce = randomBytes(8).toString('hex')): string {
  const uri = new URL(target.url).pathname + new URL(target.url).search
  const ha1 = md5(`${target.username}:${challenge.realm}:${target.password}`)
  const ha2 = md5(`${target.method}:${uri}`)
  const qop = challenge.qop?.split(',').map((q) => q.trim()).includes('auth') ? 'auth' : null
  const nc = '00000001'
  const response = qop ? md5(`${ha1}:${challenge.nonce}:${nc}:${cnonce}:${qop}:${ha2}`) : md5(`${ha1}:${challenge.nonce}:${ha2}`)
  const quoted = (value: string) => `"${value.replace(/["\\]/g, '\\$&')}"`
  const parts = [`username=${quoted(target.username)}`, `realm=${quoted(challenge.realm!)}`, `nonce=${quoted(challenge.nonce!)}`, `uri=${quoted(uri)}`, 'algorithm=MD5', `response="${response}"`]
  if (qop) parts.push(`qop=${qop}`, `nc=${nc}`, `cnonce="${cnonce}"`)
  if (challenge.opaque !== undefined) parts.push(`opaque=${quoted(challenge.opaque)}`)
  return `Digest ${parts.join(', ')}`
}

const basic = (username: string, password: string) => `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`

/**
 * Sends one request to a column and answers its status (the body is read and dropped).
 * Network failures and the deadline throw (a plain Error whose message says which).
 */
export async function push(target: PushTarget, body: { bytes: Buffer; contentType: string } | null, options: { timeoutMs: number; signal?: AbortSignal }): Promise<PushAnswer> {
  const signal = options.signal ? AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]) : AbortSignal.timeout(options.timeoutMs)
  // node:http rather than fetch: fetch refuses "bad ports" (5060, 6000, ...) that a speaker may use.
  const send = (authorization: string | null) => new Promise<{ status: number; challenge: string | null }>((resolve, reject) => {
    const headers: Record<string, string | number> = {}
    if (body) Object.assign(headers, { 'content-type': body.contentType, 'content-length': body.bytes.length })
    if (authorization) headers.authorization = authorization
    const request = (target.url.startsWith('https:') ? httpsRequest : httpRequest)(target.url, { method: target.method, headers, signal }, (response) => {
      response.resume() // the answer's body is read and dropped
      response.once('end', () => resolve({ status: response.statusCode ?? 0, challenge: response.headers['www-authenticate'] ?? null }))
      response.once('error', reject)
    })
    request.once('error', reject)
    request.end(body?.bytes)
  })
  const started = performance.now()
  const credentials = target.username !== null || target.password !== null ? { username: target.username ?? '', password: target.password ?? '' } : null
  try {
    let response = await send(credentials ? basic(credentials.username, credentials.password) : null)
    const challenge = response.status === 401 && credentials ? parseDigestChallenge(response.challenge) : null
    if (challenge) response = await send(digestAuthorization(challenge, { method: target.method, url: target.url, ...credentials! }))
    return { status: response.status, timeMs: Math.round(performance.now() - started) }
  } catch (error) {
    if (signal.aborted && !options.signal?.aborted) throw new Error(`no answer within ${options.timeoutMs} ms`)
    throw new Error((error as NodeJS.ErrnoException).code ?? (error as Error).message)
  }
}

/** Opens (and closes) a TCP connection to the URL's host and port: how long it took, or why it failed. */
export function tcpConnect(url: string, timeoutMs: number): Promise<{ ok: true; ms: number } | { ok: false; error: string }> {
  const parsed = new URL(url)
  const port = Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80))
  const host = parsed.hostname.replace(/^\[|\]$/g, '')
  const started = performance.now()
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs })
    const done = (result: { ok: true; ms: number } | { ok: false; error: string }) => { socket.destroy(); resolve(result) }
    socket.once('connect', () => done({ ok: true, ms: Math.round(performance.now() - started) }))
    socket.once('timeout', () => done({ ok: false, error: 'ETIMEDOUT' }))
    socket.once('error', (error: NodeJS.ErrnoException) => done({ ok: false, error: error.code ?? error.message }))
  })
}
