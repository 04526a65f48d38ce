import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { presentMqtt } from '../../shared/events/present.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/QueryMqttParam'],
  auth: 'session',
  body: 'json',
  summary: 'Current MQTT event-channel parameters (stored settings over configuration defaults; secrets are reported only as set or not) (spec 4.10).',
  input: Type.Object({}, { additionalProperties: false }),
  async handle(_input, ctx) {
    return presentMqtt(await ctx.events.settings.getMqtt())
  },
})
