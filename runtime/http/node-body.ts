import type { Readable } from 'node:stream'

/**
 * The body of an HTTP request as a Node stream, attached to the web `Request` that handlers
 * get as `ctx.request` (the runtime does it for multipart routes served by node:http).
 *
 * Why: reading an upload chunk through web streams costs a copy of every 64 KB read (Node's
 * web adapter detaches each Buffer from its pool) and several promise hops per read; on the
 * 2-core device that was a third of the upload path's CPU (bench/upload.bench.mjs). What
 * streams a large body (`ctx.uploads.receiveChunk`, runtime/uploads/multipart.ts) takes
 * `nodeBodyOf(request)` when present, else `request.body`. Only one of the two may be read.
 */
const NODE_BODY = Symbol.for('edge-ai-device.nodeBody')

type WithNodeBody = Request & { [NODE_BODY]?: Readable }

export function attachNodeBody(request: Request, body: Readable): Request {
  Object.defineProperty(request, NODE_BODY, { value: body })
  return request
}

export function nodeBodyOf(request: Request): Readable | null {
  return (request as WithNodeBody)[NODE_BODY] ?? null
}
