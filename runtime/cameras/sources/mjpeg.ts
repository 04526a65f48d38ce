import type { HttpKind } from './http.ts'

/** An HTTP MJPEG stream (`multipart/x-mixed-replace`), read by ffmpeg's mpjpeg demuxer. */
export const mjpeg: HttpKind = {
  answers: (contentType) => /^multipart\/x-mixed-replace/i.test(contentType),
  input: { args: ({ timeoutMs }) => ['-protocol_whitelist', 'http,https,tcp,tls', '-rw_timeout', String(timeoutMs * 1000), '-f', 'mpjpeg'] },
  open: async (context) => context.ffmpeg(await context.urlInput('mjpeg')),
}
