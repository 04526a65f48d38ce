import type { Readable } from 'node:stream'
import type { EventKind } from './kinds.ts'
import type { FleetService } from '../fleet/types.ts'

/** An event as channels and the Event endpoints present it (docs/events.md "Events"). */
export interface DeviceEvent {
  /** Outbox id: increases with every event, never reused; the resume point for WebSocket clients. */
  id: number
  kind: EventKind
  /** ISO 8601 UTC. */
  time: string
  /** The producing part of the device (see EVENT_KINDS). */
  source: string
  payload: Record<string, unknown>
}

export interface EmitOptions {
  /**
   * A drizzle transaction: the event is written in it, so it exists exactly when the state
   * change that caused it commits (`await db.transaction(async (tx) => { ...; await events.emit(kind, payload, { tx }) })`
   * inside a runtime service: handlers reach no database).
   */
  tx?: unknown
  /** Overrides the kind's default source. */
  source?: string
}

/** `ctx.events`: how handlers and runtime parts produce events. */
export interface EventsService {
  /** Writes the event to the outbox and wakes the channels; resolves with its id once written. */
  emit(kind: EventKind, payload: Record<string, unknown>, options?: EmitOptions): Promise<number>
  /** Runtime settings of the channels (System endpoints). */
  settings: ChannelSettingsService
  /**
   * In-process subscription (recording, live view): `listener` gets every committed event of
   * `kinds` written after the events system started (or after this call, when later), in id
   * order, at most once and not across restarts. A listener that throws is logged, not retried.
   * Returns the unsubscribe function.
   */
  subscribe(kinds: readonly EventKind[], listener: (event: DeviceEvent) => void | Promise<void>): () => void
  /** The devices on this device's broker and routes run on them (shared/fleet/types.ts; the console's Fleet view). */
  fleet: FleetService
  /** The retained events, read back: the Event endpoints, the passenger-flow sums, webhook dead letters (runtime/events/history.ts). */
  history: EventHistory
}

/** An event as the outbox keeps it: `time` in ms since epoch, `payload` the JSON text. */
export interface StoredEvent {
  id: number
  kind: string
  time: number
  source: string
  payload: string
}

/**
 * The filters of the Event endpoints (shared/events/query.ts, docs/events.md "Event endpoints"):
 * kinds, source and time range (ISO 8601, start inclusive, end exclusive), and the camera, task
 * and label of the payload. An empty or inverted time range is InvalidParam.
 */
export interface EventQuery {
  kinds?: string[]
  source?: string
  startTime?: string
  endTime?: string
  cameraId?: string
  taskId?: string
  label?: string
}

/** A webhook delivery that used up its attempts, with its event while the outbox still retains it. */
export interface DeadLetter {
  eventId: number
  url: string
  attempts: number
  lastError: string
  firstAttemptAt: number
  deadAt: number
  event: StoredEvent | null
}

/** ExportAlarms' two files, each a stream made when asked for. */
export interface AlarmExport {
  csv(): Readable
  zip(): Readable
}

/** `ctx.events.history`: queries of the outbox's retained events. */
export interface EventHistory {
  /**
   * One page, newest first, with the total matching; `recordedClipUrl` is the clip the recording
   * area wrote for the event afterwards (its `recording.clipReady` event), null when none.
   */
  page(query: EventQuery, pageNum: number, pageSize: number): Promise<{ total: number; rows: (StoredEvent & { recordedClipUrl: string | null })[] }>
  /**
   * The alarm events matching the query as `alarms.csv` (id, time, kind, source, payload), or a
   * zip of it with a `picture` column and each alarm's picture (`picture` finds its file), read
   * page by page as it streams; the query is checked at once (InvalidParam).
   */
  exportAlarms(query: EventQuery, options: { signal: AbortSignal; picture(alarmId: string): Promise<string> }): AlarmExport
  /** Sums of `in` and `out` of `passengerFlow.counted` events per UTC hour, day or month, oldest first. */
  passengerFlow(query: { startTime: string; endTime: string; period: 'hour' | 'day' | 'month'; source?: string; taskId?: string; counterId?: string }):
    Promise<{ periodStart: string; in: number; out: number; events: number }[]>
  /** Webhook dead letters, newest first, with the total. */
  deadLetters(pageNum: number, pageSize: number): Promise<{ total: number; rows: DeadLetter[] }>
  /** How many events of `kind` since `since` (ms), and the latest `limit` of them, newest first. */
  recent(kind: string, since: number, limit: number): Promise<{ count: number; latest: StoredEvent[] }>
}

export interface MqttSettings {
  enabled: boolean
  url: string
  clientId: string
  username: string
  password: string
  topicPrefix: string
  rejectUnauthorized: boolean
  caFile: string
  certFile: string
  keyFile: string
  /** Home Assistant MQTT discovery (docs/events.md "Home Assistant MQTT discovery"): on by default while MQTT is configured. */
  haDiscovery: boolean
  /** Home Assistant's discovery prefix (`homeassistant`). */
  haDiscoveryPrefix: string
}

export interface WebhookSettings {
  enabled: boolean
  urls: string[]
  secret: string
  timeoutMs: number
  maxAttempts: number
  backoffBaseMs: number
  backoffMaxMs: number
}

export interface ChannelStatus {
  /** `rejected`: the stored settings failed when the device started and are not in use (`lastError` says why). */
  mqtt: { state: 'disabled' | 'connecting' | 'registered' | 'disconnected' | 'rejected'; lastError: string | null; deliveredId: number }
  webhook: { urls: { url: string; deliveredId: number; lastError: string | null }[]; deadLetters: number }
  websocket: { port: number; clients: number }
  outbox: { lastId: number }
}

export interface ChannelSettingsService {
  getMqtt(): Promise<MqttSettings>
  /** Validates, persists, and reconnects without a restart. */
  setMqtt(patch: Partial<MqttSettings>): Promise<MqttSettings>
  getWebhook(): Promise<WebhookSettings>
  setWebhook(patch: Partial<WebhookSettings>): Promise<WebhookSettings>
  status(): Promise<ChannelStatus>
}
