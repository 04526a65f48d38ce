import { Type, type Static } from '@sinclair/typebox'
import type { Envelope } from '../envelope.ts'
import type { ClaimedUpload } from '../uploads/types.ts'

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

/** What a package push is doing on one device (docs/deployment.md "Fleet view"). */
export type FleetPushPhase = 'queued' | 'connecting' | 'uploading' | 'installing' | 'restarting' | 'confirming' | 'done' | 'failed'

export interface FleetPushRow {
  deviceId: string
  phase: FleetPushPhase
  /** Share of the package sent to the device (0..100) while uploading and after; null before. */
  percent: number | null
  /** null while the push runs on the device. */
  ok: boolean | null
  /**
   * `installed`, `rolled-back`, `refused`, `unknown` (of an upgrade), the device's `messageKey`,
   * `offline`, `unknown-device`, `unreachable`, `timeout`, `self-upgrade`; null while running.
   */
  outcome: string | null
  /** The device's own refusal (spec 7: messageKey, msgText, recommendedAction, details), or why it was not reached. */
  error: { messageKey: string | null; msgText: string; recommendedAction: string | null; details: unknown; httpStatus: number | null } | null
  /** One line: the algorithms installed, or `from → running version (reason)`. */
  detail: string | null
}

export interface FleetPush {
  pushId: string
  kind: FleetPushKind
  fileName: string
  size: number
  startedAt: string
  finishedAt: string | null
  rows: FleetPushRow[]
}

export type FleetPushKind = 'algorithm' | 'upgrade'

export interface FleetPushRequest {
  kind: FleetPushKind
  deviceIds: string[]
  /** Of an algorithm package: replace algorithms that exist already. */
  replace: boolean
  /** The account and password digest (spec 5.8) that sign in on each target device, as `device-cli fleet push-*` does. */
  account: string
  pwdMd5: string
  /** The package, claimed from this device's uploads; released when the push has finished. */
  file: ClaimedUpload
}

export interface FleetService {
  /** Every device with a registration or status on the broker; MqttNotRegistered while the device's own connection is not up. */
  list(): FleetDeviceView[]
  /** Runs `path` on each device through its request topic, at most 4 at once. */
  call(deviceIds: string[], path: string, body: unknown, timeoutMs: number): Promise<FleetCallResult[]>
  /** Starts pushing a package to each device (in the background); FleetPushBusy when too many run. */
  push(request: FleetPushRequest): FleetPush
  /**
   * Throws what `push` would refuse before reading its request (MqttNotRegistered,
   * FleetPushBusy), so that Fleet/push refuses before it consumes the upload: a retry after
   * FleetPushBusy can send the same `uploadId`.
   */
  assertCanPush(): void
  /** The push's progress and results so far; FleetPushNotFound when it is not kept. */
  pushStatus(pushId: string): FleetPush
}

export const FleetPushInput = Type.Object({
  uploadId: Type.String({ minLength: 1, maxLength: 128, description: 'A completed upload on this device of purpose `algorithm` or `upgrade` (the kind), by this session.' }),
  kind: Type.Union([Type.Literal('algorithm'), Type.Literal('upgrade')]),
  deviceIds: Type.Array(Type.String({ minLength: 1, maxLength: 128, pattern: '^[^/+#\\s]+$' }), { minItems: 1, maxItems: 100, uniqueItems: true }),
  replace: Type.Optional(Type.Boolean({ default: false })),
  account: Type.String({ minLength: 1, maxLength: 64 }),
  pwd: Type.String({ pattern: '^[0-9a-fA-F]{32}$', description: 'MD5 digest of the target devices\' password (spec 5.8); never stored, never shown.' }),
}, { additionalProperties: false })
export type FleetPushInput = Static<typeof FleetPushInput>

export const FleetPushStatusInput = Type.Object({
  pushId: Type.String({ minLength: 1, maxLength: 64 }),
}, { additionalProperties: false })

export const FleetCallInput = Type.Object({
  deviceIds: Type.Array(Type.String({ minLength: 1, maxLength: 128, pattern: '^[^/+#\\s]+$' }), { minItems: 1, maxItems: 100, uniqueItems: true }),
  path: Type.String({ minLength: 2, maxLength: 256, pattern: '^/[A-Za-z0-9/_-]+$', description: 'A route of the HTTP interface; not a Fleet route, not a multipart upload.' }),
  body: Type.Optional(Type.Unknown({ description: 'The route\'s JSON body ({} when absent).' })),
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1000, maximum: 120_000, default: 30_000 })),
}, { additionalProperties: false })
export type FleetCallInput = Static<typeof FleetCallInput>
