import { defineHandler } from '../../shared/handler.ts'
import { presentMqtt } from '../../shared/events/present.ts'
import { MqttSettingsPatch } from '../../shared/events/settings-schema.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/SetMqttParam'],
  auth: 'session',
  body: 'json',
  summary: 'Set MQTT event-channel parameters: validated, stored, applied at once (the broker connection is replaced; no restart) (spec 4.10).',
  input: MqttSettingsPatch,
  async handle(input, ctx) {
    return presentMqtt(await ctx.events.settings.setMqtt(input))
  },
})
