import type { StreamTaskResult } from '../../shared/streams/types.ts'
import { monotonicNow } from '../../shared/clock.ts'

/** How often the task's latest result is looked at; the detector runs at most at the task's rate. */
const POLL_MS = 100
/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000

/**
 * The overlay of a live view session as Server-Sent Events (`text/event-stream`): one
 * `data:` line per new detector result, `{time, width, height, objects: [{box, label,
 * confidence}]}`, boxes in pixels of the analysed frame (`width` × `height`); the player
 * scales them onto the picture. `onEnd` runs when the client goes away or `end` is called.
 */
export function overlayStream(latest: () => StreamTaskResult | null, onEnd: () => void): { stream: ReadableStream<Uint8Array>; end(): void } {
  const encoder = new TextEncoder()
  let controller!: ReadableStreamDefaultController<Uint8Array>
  let timer: NodeJS.Timeout | null = null
  let lastTime = -1
  let lastSent = monotonicNow()
  const stop = () => {
    if (!timer) return
    clearInterval(timer)
    timer = null
    onEnd()
  }
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c
      // retry: the player's EventSource reconnects after 1 s when the stream breaks.
      controller.enqueue(encoder.encode('retry: 1000\n\n'))
      timer = setInterval(() => {
        const result = latest()
        const now = monotonicNow()
        if (result && result.time !== lastTime) {
          lastTime = result.time
          lastSent = now
          controller.enqueue(encoder.encode(`data: ${JSON.stringify({ time: result.time, taskId: result.taskId, width: result.width, height: result.height, objects: result.objects })}\n\n`))
        } else if (now - lastSent >= KEEP_ALIVE_MS) {
          lastSent = now
          controller.enqueue(encoder.encode(': keep-alive\n\n'))
        }
      }, POLL_MS)
    },
    cancel: stop,
  })
  return {
    stream,
    end() {
      if (!timer) return
      stop()
      controller.close()
    },
  }
}
