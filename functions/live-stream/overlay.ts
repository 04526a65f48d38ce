import { defineHandler } from '../../shared/handler.ts'
import { LIVE_OVERLAY_ROUTE, LiveMediaInput } from '../../shared/live/types.ts'

export default defineHandler({
  routes: [LIVE_OVERLAY_ROUTE],
  auth: 'stream',
  body: 'none',
  methods: ['GET'],
  summary: 'The overlay of a live view session requested with overlay: Server-Sent Events (text/event-stream), one data line per detector result of the camera\'s stream task: {time, taskId, width, height, objects: [{box: {x, y, width, height}, label, confidence}]}, boxes in pixels of width × height. LiveSessionNotFound.',
  input: LiveMediaInput,
  handle(input, ctx) {
    return ctx.live.overlay(input.id, ctx.identity!)
  },
})
