import { finished, Readable, Transform } from 'node:stream'
import type { Context } from 'hono'
import { ApiError, RecommendedAction } from '../../shared/errors/index.ts'

/**
 * Counts a request body while it streams and fails once it passes `limitBytes` (spec 8:
 * limits are per-request parsing and memory boundaries); the handler never sees more. Unlike hono's `bodyLimit`,
 * which buffers the body, this keeps the stream a stream, so upload chunks never sit whole
 * in memory.
 */
export class BodyTooLarge extends Error {
  constructor(readonly limitBytes: number, readonly actualBytes: number | null) {
    super(`request body exceeds ${limitBytes} bytes`)
    this.name = 'BodyTooLarge'
  }
}

export interface LimitedBody {
  stream: ReadableStream<Uint8Array> | null
  /** The same body as a Node stream, when the request came from node:http (runtime/http/node-body.ts). */
  node?: Readable
  /** Set once the limit was crossed, whatever the reader did with the error. */
  exceeded(): BodyTooLarge | null
  /**
   * Reads what the handler left unread (up to the drain cap) so that the client, which may
   * still be writing, can read the answer; call it before responding.
   */
  settle(): Promise<void>
}

/**
 * Bodies over the limit are still read (and discarded) up to this many bytes before the 413 is
 * sent: a client that is still writing when the answer comes would otherwise see a broken pipe
 * instead of the 413. Past it, the connection is dropped.
 */
export const DRAIN_CAP_BYTES = 32 * 1024 * 1024

export function limitBody(body: ReadableStream<Uint8Array> | null, limitBytes: number): LimitedBody {
  let crossed: BodyTooLarge | null = null
  if (!body) return { stream: null, exceeded: () => crossed, settle: async () => {} }
  const reader = body.getReader()
  let seen = 0
  let finished = false
  let reading: Promise<unknown> = Promise.resolve()
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = reader.read()
      reading = next
      const { done, value } = await next
      if (done) {
        finished = true
        return controller.close()
      }
      seen += value.byteLength
      if (seen <= limitBytes) return controller.enqueue(value)
      crossed = new BodyTooLarge(limitBytes, null)
      await discard(reader, DRAIN_CAP_BYTES - seen)
      finished = true
      controller.error(crossed)
    },
    // A consumer that gives up (a rejected chunk) leaves the rest to settle().
    cancel() {},
  })
  const settle = async () => {
    await reading.catch(() => undefined)
    if (finished) return
    finished = true
    await discard(reader, DRAIN_CAP_BYTES - seen).catch(() => undefined)
  }
  return { stream, exceeded: () => crossed, settle }
}

/**
 * The body of a request that node:http serves (hono's `c.env.incoming`), limited without web
 * streams: a pass-through byte counter on the IncomingMessage, which fails with BodyTooLarge
 * once `limitBytes` is passed. `stream` is a web view of it, made only if someone reads it.
 * Other requests (app.fetch in tests, other servers) get `limitBody` on the web body.
 */
export function limitRequestBody(c: Context, limitBytes: number): LimitedBody {
  const incoming = (c.env as { incoming?: unknown } | undefined)?.incoming
  return incoming instanceof Readable ? limitNodeBody(incoming, limitBytes) : limitBody(c.req.raw.body, limitBytes)
}

export function limitNodeBody(source: Readable, limitBytes: number): LimitedBody {
  let crossed: BodyTooLarge | null = null
  let seen = 0
  const node = new Transform({
    // As much as the socket hands over in one go, so that the source need not pause per read.
    highWaterMark: 1024 * 1024,
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length
      if (seen <= limitBytes) return callback(null, chunk)
      crossed = new BodyTooLarge(limitBytes, null)
      callback(crossed) // the reader sees the error; settle() drains the rest
    },
  })
  node.on('error', () => undefined) // recorded in `crossed`, or the source's failure passed on
  // A client that goes away mid-body fails the reader instead of leaving it waiting.
  finished(source, (error) => { if (error && !node.destroyed) node.destroy(error) })
  source.pipe(node)
  let stream: ReadableStream<Uint8Array> | null = null
  const webView = () => {
    let reader: ReadableStreamDefaultReader<Uint8Array> | null = null
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        reader ??= (Readable.toWeb(node) as ReadableStream<Uint8Array>).getReader()
        const { done, value } = await reader.read()
        if (done) controller.close()
        else controller.enqueue(value)
      },
      cancel() {}, // a consumer that gives up leaves the rest to settle()
    }, { highWaterMark: 0 }) // no read ahead: a reader of `node` must get every byte
  }
  const settle = async () => {
    source.unpipe(node)
    if (source.readableEnded || source.destroyed) return
    await discardNode(source, DRAIN_CAP_BYTES - seen)
  }
  return { get stream() { return stream ??= webView() }, node, exceeded: () => crossed, settle }
}

/** Reads and drops up to `budget` more bytes of a Node stream; destroys it when the budget runs out. */
function discardNode(source: Readable, budget: number): Promise<void> {
  return new Promise((resolve) => {
    let left = budget
    const stop = () => {
      source.off('data', onData)
      source.off('end', stop)
      source.off('close', stop)
      source.off('error', stop)
      resolve()
    }
    const onData = (chunk: Buffer) => {
      left -= chunk.length
      if (left > 0) return
      stop()
      source.destroy()
    }
    source.on('data', onData)
    source.once('end', stop)
    source.once('close', stop)
    source.once('error', stop)
    if (left <= 0) onData(Buffer.alloc(0))
    source.resume()
  })
}

/** Reads and drops up to `budget` more bytes; cancels the source when the budget runs out. */
export async function discard(reader: ReadableStreamDefaultReader<Uint8Array>, budget: number): Promise<void> {
  let left = budget
  while (left > 0) {
    const { done, value } = await reader.read()
    if (done) return
    left -= value.byteLength
  }
  await reader.cancel()
}

/**
 * spec 7.1, 8: HTTP 413 with HTTP_BODY_TOO_LARGE; the action depends on the request type
 * (chunked upload for multipart, a smaller body for the rest).
 */
export const bodyTooLargeError = (limitBytes: number, actualBytes: number | null, multipart: boolean) =>
  new ApiError('HTTP_BODY_TOO_LARGE', {
    details: { limitBytes, ...(actualBytes === null ? {} : { actualBytes }), resource: multipart ? 'multipart-request' : 'json-request' },
    recommendedAction: multipart ? RecommendedAction.USE_CHUNKED_UPLOAD : RecommendedAction.REDUCE_REQUEST_BODY,
  })
