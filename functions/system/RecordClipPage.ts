import { defineHandler } from '../../shared/handler.ts'
import { ClipPageInput } from '../../shared/recording/types.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/RecordClipPage'],
  auth: 'session',
  body: 'json',
  summary: 'Pages through recorded clips, newest first (spec 4.10 System: recording), by camera, kind, originating event and time; each with its clipUrl (video/mp4, Range supported).',
  input: ClipPageInput,
  handle(input, ctx) {
    return ctx.recording.clipPage(input)
  },
})
