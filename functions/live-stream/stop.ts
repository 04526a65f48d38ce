import { defineHandler } from '../../shared/handler.ts'
import { LiveSessionInput } from '../../shared/live/types.ts'

export default defineHandler({
  routes: ['/gtw/cwai/LiveStream/stop'],
  auth: 'session',
  body: 'json',
  summary: 'Ends a live view session at once (spec 4.10 Live stream): its streams close and its tokens stop working; the camera\'s upstream stops with its last session. LiveSessionNotFound.',
  input: LiveSessionInput,
  handle(input, ctx) {
    ctx.live.stop(input.sessionId, ctx.identity!)
    return { sessionId: input.sessionId, stopped: true }
  },
})
