import { defineHandler } from '../../shared/handler.ts'
import { LIVE_PLAY_ROUTE, LiveMediaInput } from '../../shared/live/types.ts'

export default defineHandler({
  routes: [LIVE_PLAY_ROUTE],
  auth: 'stream',
  body: 'none',
  methods: ['GET'],
  summary: 'The stream of a live view session: fragmented MP4 (video/mp4, init segment then a fragment at least every 100 ms, starting at a key frame), until the session ends; the URL from LiveStream/request (?id=&token=). A second GET of the same session replaces the first. LiveSessionNotFound, LiveStreamUnavailable.',
  input: LiveMediaInput,
  handle(input, ctx) {
    return ctx.live.play(input.id, ctx.identity!)
  },
})
