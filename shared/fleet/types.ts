import { Type, type Static } from '@sinclair/typebox'
import type { Envelope } from '../envelope.ts'

/**
 * The console's Fleet view (docs/deployment.md "Fleet view"): the devices announced on the
 * device's own broker — their retained registration, status and summary, the announcements
 * `device-cli fleet` reads — and routes run on several of them through the MQTT request
 * transport (spec 5.6). Implementation: runtime/events/fleet.ts; endpoints: functions/fleet/.
 */

/** One recent alarm of a device's summary: no URL that needs that device's session; a small picture inline. */
export interface FleetAlarm {
  alarmId: string
  time: string
  policyName: string | null
  label: string | null
  message: string
  cameraId: string | null
  taskId: string
  /** A thumbnail (≤ 160 px wide) as a data: URL, null when the alarm kept no picture. */
  thumbnail: string | null
}

/** What each device publishes, retained, on `<prefix>/<id>/summary` (docs/deployment.md "Fleet view"). */
export interface FleetSummary {
  publishedAt: string
  softwareVersion: string
  uptimeSeconds: number
  cameras: { total: number; online: number }
  tasks: { total: number; running: number }
  alarmsLastHour: number
  diskAvailableBytes: number
  latestAlarms: FleetAlarm[]
}

export interface FleetDeviceView {
  deviceId: string
  /** The device answering. */
  self: boolean
  state: 'online' | 'offline' | 'unknown'
  softwareVersion: string | null
  startedAt: string | null
  /** The address of its console (first of its registration's `http.urls`), null when it names none. */
  consoleUrl: string | null
  summary: FleetSummary | null
}

export interface FleetCallResult {
  deviceId: string
  /** `ok`, the device's `messageKey`, `offline`, `unknown-device` or `timeout` (the CLI's outcomes). */
  outcome: string
  ok: boolean
  status: number | null
  envelope: Envelope | null
}

export interface FleetService {
  /** Every device with a registration or status on the broker; MqttNotRegistered while the device's own connection is not up. */
  list(): FleetDeviceView[]
  /** Runs `path` on each device through its request topic, at most 4 at once. */
  call(deviceIds: string[], path: string, body: unknown, timeoutMs: number): Promise<FleetCallResult[]>
}

export const FleetCallInput = Type.Object({
  deviceIds: Type.Array(Type.String({ minLength: 1, maxLength: 128, pattern: '^[^/+#\\s]+$' }), { minItems: 1, maxItems: 100, uniqueItems: true }),
  path: Type.String({ minLength: 2, maxLength: 256, pattern: '^/[A-Za-z0-9/_-]+$', description: 'A route of the HTTP interface; not a Fleet route, not a multipart upload.' }),
  body: Type.Optional(Type.Unknown({ description: 'The route\'s JSON body ({} when absent).' })),
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1000, maximum: 120_000, default: 30_000 })),
}, { additionalProperties: false })
export type FleetCallInput = Static<typeof FleetCallInput>
