import { urlFields } from './fields.ts'
import type { CameraSource } from './types.ts'

/**
 * `rtsp`: an RTSP URL read by ffmpeg over TCP; frames carry the time they were received
 * (shared with the live view's, docs/recording-and-live-view.md "Boxes on the frame shown").
 */
export const rtsp: CameraSource = {
  fields: (input, stored) => urlFields('rtsp', input, stored),
  input: {
    args: ({ timeoutMs, rtspTimeoutOption, wallclock }) => [
      '-protocol_whitelist', 'tcp,udp,rtp,tls', '-rtsp_transport', 'tcp', rtspTimeoutOption, String(timeoutMs * 1000),
      // Every packet stamped with the time ffmpeg received it (ffmpeg.ts inputArgs keeps it with -copyts).
      ...(wallclock ? ['-use_wallclock_as_timestamps', '1'] : []),
    ],
    timed: true,
  },
  open: async (context) => context.ffmpeg(await context.urlInput('rtsp')),
  copy: async (context, wallclock) => {
    const spec = await context.urlInput('rtsp')
    return { args: context.args(spec, wallclock), password: context.row.password, ticket: spec.ticket, wallclock: wallclock === true }
  },
}
