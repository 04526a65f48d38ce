import type { IncomingMessage } from 'node:http'
import { isIP } from 'node:net'
import type { Readable } from 'node:stream'
import type { Context } from 'hono'
import { ApiError, internalError, isApiError, invalidParam } from '../../shared/errors/index.ts'
import { failure, success, type Envelope } from '../../shared/envelope.ts'
import type { Ctx, HandlerDefinition, Identity, Services } from '../../shared/handler.ts'
import type { RouteEntry, RouteTable } from './route-table.ts'
import type { InputValidator } from './validate.ts'
import { scrapeTokenAccepted } from '../auth/scrape-token.ts'
import { STREAM_TOKEN_PARAM } from '../../shared/auth/stream-tokens.ts'
import { attachNodeBody } from './node-body.ts'
import { jsonBytes } from './json-bytes.ts'
import { BodyTooLarge, bodyTooLargeError, discard, DRAIN_CAP_BYTES, limitBody, limitRequestBody, type LimitedBody } from './body-limit.ts'

export interface DispatchDeps {
  services: Services
  table: RouteTable
  validator: InputValidator
}

type Vars = { Variables: { requestId: string } }

export const errorResponse = (c: Context, error: ApiError) => c.json(failure([error.item]), error.httpStatus as 200)

/** The one route of the hono app: looks the path up in the live route table and runs it. */
export function dispatch({ services, table, validator }: DispatchDeps) {
  return async function dispatchToHandler(c: Context<Vars>) {
    const requestId = c.get('requestId')
    const entry = table.lookup(c.req.path)
    if (!entry) return errorResponse(c, new ApiError('RouteNotFound', { details: { path: c.req.path } }))
    const method = c.req.method as RouteEntry['route']['methods'][number]
    if (!entry.route.methods.includes(method) && !(method === 'HEAD' && entry.route.methods.includes('GET')))
      return errorResponse(c, new ApiError('MethodNotAllowed', { details: { method, allowed: entry.route.methods } }))

    const { route } = entry
    let definition: HandlerDefinition
    try {
      // A bundle is imported at the first request of its routes (route-table.ts).
      definition = await entry.load()
    } catch (error) {
      services.log.error({ err: error, path: route.path, requestId }, 'handler bundle failed to load')
      return errorResponse(c, internalError(error, { requestId }))
    }
    const multipart = route.body === 'multipart'
    const limitBytes = bodyLimitOf(services.config, route.body, definition.bodyLimit)

    // A declared length over the limit is refused before anything is read (spec 8).
    const declared = Number(c.req.header('content-length') ?? NaN)
    if (route.body !== 'none' && Number.isFinite(declared) && declared > limitBytes) {
      if (c.req.raw.body && declared <= DRAIN_CAP_BYTES) await discard(c.req.raw.body.getReader(), declared)
      c.header('Connection', 'close')
      return errorResponse(c, bodyTooLargeError(limitBytes, declared, multipart))
    }

    let identity: Identity | null = null
    // A scraper's token (docs/metrics.md "Metrics") stands for no account: the handler runs without an identity.
    const scraper = route.auth === 'scrape' && scrapeTokenAccepted(services.config.metricsToken, c.req.header('authorization'))
    // A media URL's stream token (docs/recording-and-live-view.md "Live view") stands for the account that was granted it.
    if (route.auth === 'stream') identity = services.streamTokens.verify(c.req.query(STREAM_TOKEN_PARAM), route.path, c.req.query('id'))
    if (route.auth !== 'anonymous' && !scraper && !identity) {
      // spec 5.2-5.3: every route but DoLogin and Probe needs a valid mtk; otherwise HTTP 401.
      identity = await services.sessions.resolve(c.req.header('mtk'))
      if (!identity) return errorResponse(c, new ApiError('Unauthorized'))
      // spec 5.7: a pending password change blocks business use.
      if (route.auth !== 'session-any' && identity.passwordChangeRequired) return errorResponse(c, new ApiError('PasswordChangeRequired'))
    }

    // Bodies are read from node:http's own stream when there is one (body-limit.ts): no web
    // Request or stream is built for them.
    const body = route.body === 'none' ? limitBody(null, limitBytes) : limitRequestBody(c, limitBytes)
    try {
      let input: unknown = {}
      let request: Request | null = c.req.raw
      if (route.body === 'json') {
        input = await readJson(body)
      } else if (multipart) {
        if (!/^multipart\/form-data/i.test(c.req.header('content-type') ?? ''))
          throw new ApiError('UnsupportedMediaType', { details: { expected: 'multipart/form-data', received: c.req.header('content-type') ?? null } })
        request = body.node ? limitedNodeRequest(c.req.raw, body) : new Request(c.req.raw.url, { method: c.req.method, headers: c.req.raw.headers, body: body.stream, duplex: 'half' } as RequestInit)
      } else {
        input = Object.fromEntries(new URL(c.req.url).searchParams)
      }
      const clientAddress = clientAddressOf(c, services.config.httpTrustProxy)
      const outcome = await runHandler({ services, validator }, entry, input, { identity, requestId, clientAddress, localAddress: localAddressOf(c), request, signal: c.req.raw.signal })
      await body.settle()
      // A handler streaming the body may turn the limit error into its own; the limit wins.
      const crossed = body.exceeded()
      if (crossed) throw crossed
      return toResponse(c, outcome)
    } catch (error) {
      await body.settle()
      const tooLarge = body.exceeded() ?? (error instanceof BodyTooLarge ? error : null)
      if (tooLarge) {
        c.header('Connection', 'close')
        return errorResponse(c, bodyTooLargeError(tooLarge.limitBytes, tooLarge.actualBytes, multipart))
      }
      if (isApiError(error)) return errorResponse(c, error)
      services.log.error({ err: error, requestId, path: route.path }, 'unexpected error while reading the request')
      return errorResponse(c, internalError(error, { requestId }))
    }
  }
}

/**
 * The client's address (ctx.clientAddress): the socket's peer under node:http. X-Forwarded-For is
 * believed only when HTTP_TRUST_PROXY says a proxy stands in front, and then only its last entry,
 * the one that proxy added (the earlier ones are the client's own word).
 */
function clientAddressOf(c: Context, trustProxy: boolean): string | null {
  const forwarded = trustProxy ? c.req.header('x-forwarded-for')?.split(',').at(-1)?.trim() : undefined
  if (forwarded && isIP(forwarded)) return forwarded
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming
  return incoming?.socket?.remoteAddress ?? null
}

/** The device's address the request arrived at (ctx.localAddress): the server's side of node:http's socket. */
export function localAddressOf(c: Context): string | null {
  const local = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket?.localAddress
  // a dual-stack listener reports IPv4 connections as ::ffff:a.b.c.d
  return local ? local.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '') : null
}

const FORM_OVERHEAD_BYTES = 1024 * 1024

/** spec 8: 1 MB JSON, 10 MB multipart; chunk routes follow maxChunkSize up to the 12 MB backstop. */
function bodyLimitOf(config: Services['config'], body: string, kind: HandlerDefinition['bodyLimit']) {
  if (body === 'json') return config.jsonBodyLimitBytes
  if (kind !== 'chunk') return config.multipartBodyLimitBytes
  return Math.min(config.backstopBodyLimitBytes, Math.max(config.multipartBodyLimitBytes, config.uploadMaxChunkBytes + FORM_OVERHEAD_BYTES))
}

export interface Outcome {
  status: number
  envelope: Envelope
}

/**
 * Validates the input and runs the handler; the one place where a handler's result or error
 * becomes an envelope. HTTP dispatch and other transports (MQTT requests, spec 5.6) share it.
 */
export async function runHandler(
  deps: { services: Services; validator: InputValidator },
  entry: RouteEntry,
  input: unknown,
  call: Pick<Ctx, 'identity' | 'requestId' | 'clientAddress' | 'localAddress' | 'request' | 'signal'>,
): Promise<Outcome | Response> {
  const log = deps.services.log.child({ requestId: call.requestId })
  const ctx: Ctx = { ...deps.services, ...call, log }
  try {
    const definition = await entry.load()
    const validInput = deps.validator.validate(definition.input, input)
    const result = await definition.handle(validInput as never, ctx)
    if (result instanceof Response) return result
    return { status: 200, envelope: success(result) }
  } catch (error) {
    if (error instanceof BodyTooLarge) throw error
    if (isApiError(error)) return { status: error.httpStatus, envelope: failure([error.item]) }
    log.error({ err: error, path: entry.route.path }, 'unexpected error in handler')
    const internal = internalError(error, { requestId: call.requestId })
    return { status: internal.httpStatus, envelope: failure([internal.item]) }
  }
}

async function toResponse(c: Context, outcome: Outcome | Response): Promise<Response> {
  if (outcome instanceof Response) return outcome
  return c.body(jsonBytes(outcome.envelope), outcome.status as 200, { 'content-type': 'application/json' })
}

async function readJson(body: LimitedBody): Promise<unknown> {
  const text = body.node ? await readText(body.node) : body.stream ? await new Response(body.stream).text() : ''
  if (text.trim() === '') return {}
  try {
    return JSON.parse(text)
  } catch {
    throw invalidParam('/', 'request body is not valid JSON')
  }
}

/**
 * The request a multipart handler gets under node:http: @hono/node-server's own lightweight
 * Request (no web Request is built for it), with the limited body in place of the raw one, as a
 * Node stream (runtime/http/node-body.ts) and as `body`.
 */
function limitedNodeRequest(raw: Request, body: LimitedBody): Request {
  Object.defineProperty(raw, 'body', { get: () => body.stream })
  return attachNodeBody(raw, body.node!)
}

async function readText(stream: Readable): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}
