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
