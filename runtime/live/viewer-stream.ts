import type { Viewer } from './tap.ts'

/** What a viewer may have queued before it skips to the next key frame (about 10 s of a 4 Mbit/s camera). */
export const VIEWER_BUFFER_BYTES = 4 * 1024 * 1024

/**
 * A viewer as an HTTP response body: bytes are queued up to VIEWER_BUFFER_BYTES (the HTTP
 * server drains the queue as fast as the client reads); past it a write is refused, so a stalled
 * client costs at most its buffer. `onCancel` runs when the client goes away.
 */
export function viewerStream(onCancel: () => void): { stream: ReadableStream<Uint8Array>; viewer: Viewer } {
  let controller!: ReadableStreamDefaultController<Uint8Array>
  let closed = false
  const stream = new ReadableStream<Uint8Array>({
    start: (c) => { controller = c },
    cancel: () => {
      closed = true
      onCancel()
    },
  }, new ByteLengthQueuingStrategy({ highWaterMark: VIEWER_BUFFER_BYTES }))
  const viewer: Viewer = {
    write(...parts) {
      if (closed || (controller.desiredSize ?? 0) <= 0) return false
      for (const part of parts) controller.enqueue(part)
      return true
    },
    end() {
      if (closed) return
      closed = true
      controller.close()
    },
  }
  return { stream, viewer }
}
