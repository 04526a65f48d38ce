import { ApiError, RecommendedAction } from '../../shared/errors/index.ts'

/**
 * Counts a request body while it streams and fails as soon as it passes `limitBytes`
 * (spec 8: limits are per-request parsing and memory boundaries). Unlike hono's `bodyLimit`,
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
}

export function limitBody(body: ReadableStream<Uint8Array> | null, limitBytes: number): LimitedBody {
  let crossed: BodyTooLarge | null = null
  if (!body) return { stream: null, exceeded: () => crossed }
  let seen = 0
  const stream = body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.byteLength
      if (seen > limitBytes) {
        crossed = new BodyTooLarge(limitBytes, null)
        controller.error(crossed)
        return
      }
      controller.enqueue(chunk)
    },
  }))
  return { stream, exceeded: () => crossed }
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
