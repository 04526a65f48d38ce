import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { MAX_NTP_SERVERS } from '../../shared/system/types.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/SetTimeParam'],
  auth: 'session',
  body: 'json',
  summary: 'Sets the device time zone (an IANA name, e.g. Europe/Berlin: TimeZoneUnknown otherwise) and/or the NTP servers, written to the host\'s time service (TimeServiceUnavailable, TimeChangeNotPermitted, TimeServiceFailed; nothing changes then). Answers as QueryTimeParam.',
  input: Type.Object({
    timeZone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone name (Intl\'s database), e.g. Europe/Berlin, America/New_York, UTC.' })),
    ntpServers: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { maxItems: MAX_NTP_SERVERS, description: 'Host names or IP addresses (port 123); [] removes the device\'s servers (the service\'s own defaults apply).' })),
  }, { additionalProperties: false }),
  handle(input, ctx) {
    return ctx.time.set(input)
  },
})
