import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/QueryEventChannelStatus'],
  auth: 'session',
  body: 'json',
  summary: 'State of the event channels: MQTT connection, webhook cursors and dead-letter count, WebSocket clients, last outbox id.',
  input: Type.Object({}, { additionalProperties: false }),
  async handle(_input, ctx) {
    return ctx.events.settings.status()
  },
})
