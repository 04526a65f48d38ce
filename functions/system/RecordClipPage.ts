import { invalidParam } from '../../shared/errors/index.ts'
import { defineHandler } from '../../shared/handler.ts'
import { ClipPageInput } from '../../shared/recording/types.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/RecordClipPage'],
  auth: 'session',
  body: 'json',
  summary: 'Pages through recorded clips, newest first (spec 4.10 System: recording), by camera, kind, originating event and time; each with its clipUrl (video/mp4, Range supported).',
  input: ClipPageInput,
  handle(input, ctx) {
    // A span that ends before it starts holds no clip: a mistake worth saying (a day's timeline asks from midnight to midnight).
    if (input.from !== undefined && input.to !== undefined && input.from >= input.to) throw invalidParam('/to', 'must be later than from')
    return ctx.recording.clipPage(input)
  },
})
