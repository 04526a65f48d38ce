import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Fleet/list'],
  auth: 'session',
  body: 'json',
  summary: 'The devices announced on this device\'s MQTT broker (their retained registration, status and summary, as device-cli fleet reads them): state, version, uptime, cameras, tasks, alarms in the last hour, disk, latest alarms with thumbnails, console address; no credential of any device. MqttNotRegistered while MQTT is not up.',
  input: Type.Object({}, { additionalProperties: false }),
  async handle(_input, ctx) {
    const rows = ctx.events.fleet.list()
    return { total: rows.length, rows }
  },
})
