import { FleetCallInput } from '../../shared/fleet/types.ts'
import { invalidParam } from '../../shared/errors/index.ts'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Fleet/call'],
  auth: 'session',
  body: 'json',
  summary: 'Runs one route on several devices of the fleet through their MQTT request topics (spec 5.6, as device-cli fleet call): per device its outcome (ok, its messageKey, offline, unknown-device, timeout), status and envelope. Fleet routes are refused (InvalidParam).',
  input: FleetCallInput,
  async handle(input, ctx) {
    if (input.path.startsWith('/gtw/cwai/Fleet/')) throw invalidParam('/path', 'a Fleet route is not run on other devices')
    const rows = await ctx.events.fleet.call(input.deviceIds, input.path, input.body ?? {}, input.timeoutMs ?? 30_000)
    return { total: rows.length, succeeded: rows.filter((r) => r.ok).length, rows }
  },
})
