import { defineHandler } from '../../shared/handler.ts'
import { LiveSessionInput } from '../../shared/live/types.ts'

export default defineHandler({
  routes: ['/gtw/cwai/LiveStream/keepAlive'],
  auth: 'session',
  body: 'json',
  summary: 'Keeps a live view session open for another LIVE_IDLE_TIMEOUT_MS (spec 4.10 Live stream); answers the session as request does. LiveSessionNotFound once it ended.',
  input: LiveSessionInput,
  handle(input, ctx) {
    return ctx.live.keepAlive(input.sessionId, ctx.identity!)
  },
})
