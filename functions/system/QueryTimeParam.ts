import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/QueryTimeParam'],
  auth: 'session',
  body: 'json',
  summary: 'The device\'s time (spec 4.10 System): {timeZone, now, localTime, utcOffsetMinutes, ntpServers, timeService: {type, reason}}; timeService is the host\'s service NTP servers are written to (systemd-timesyncd, chrony) or null with the reason.',
  input: Type.Object({}, { additionalProperties: false }),
  handle(_input, ctx) {
    return ctx.time.status()
  },
})
