import { defineHandler } from '../../shared/handler.ts'
import { LiveRequestInput } from '../../shared/live/types.ts'

export default defineHandler({
  routes: ['/gtw/cwai/LiveStream/request'],
  auth: 'session',
  body: 'json',
  summary: 'Opens a live view session on a camera (spec 4.10 Live stream): url (fragmented MP4, H.264 copied without re-encoding, for <video> or Media Source Extensions, a stream token in it), overlayUrl (Server-Sent Events of the task\'s boxes) with overlay, mimeType, idleTimeoutMs, expiresAt. StreamSourceUnsupported, LiveViewerLimit, LiveCodecUnsupported, LiveStreamUnavailable, CameraNotFound.',
  input: LiveRequestInput,
  handle(input, ctx) {
    return ctx.live.request(input, ctx.identity!)
  },
})
