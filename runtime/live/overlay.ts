import type { StreamTaskResult } from '../../shared/streams/types.ts'
import { monotonicNow } from '../../shared/clock.ts'

/** How often the task's latest result is looked at: well under a frame, so every result of a task at the camera's rate goes out. */
const POLL_MS = 25
/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000

/**
 * The overlay of a live view session as Server-Sent Events (`text/event-stream`): one
 * `data:` line per new detector result, `{time, pts, mediaTime, width, height, objects: [{box,
 * label, confidence, velocity?}]}`, boxes in pixels of the analysed frame (`width` × `height`); the player
 * scales them onto the picture. `mediaTime` is where the analysed frame is in the session's
 * video, in seconds (the player draws the result on that very frame,
 * docs/recording-and-live-view.md "Boxes on the frame shown"); null when the stream has no
 * such timestamps. `onEnd` runs when the client goes away or `end` is called.
 */
export function overlayStream(latest: () => StreamTaskResult | null, mediaTime: (pts: number) => number | null, onEnd: () => void): { stream: ReadableStream<Uint8Array>; end(): void } {
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
          controller.enqueue(encoder.encode(`data: ${JSON.stringify({ time: result.time, pts: result.pts, mediaTime: result.pts === null ? null : mediaTime(result.pts), taskId: result.taskId, width: result.width, height: result.height, objects: result.objects })}\n\n`))
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
