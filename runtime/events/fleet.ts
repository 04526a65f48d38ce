import { randomUUID } from 'node:crypto'
import type { MqttClient } from 'mqtt'
import { storageOf } from '../../shared/aihost/system.ts'
import type { Envelope } from '../../shared/envelope.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { MqttSettings } from '../../shared/events/types.ts'
import type { FleetAlarm, FleetCallResult, FleetDeviceView, FleetPush, FleetPushRequest, FleetService, FleetSummary } from '../../shared/fleet/types.ts'
import type { FleetLink, PushTarget } from '../client/fleet-push.ts'
import { waitForMatch } from '../client/wait-for-match.ts'
import { FleetPushes } from './fleet-push.ts'
import type { Logger, Services } from '../../shared/handler.ts'
import { loadSharp } from '../load-sharp.ts'
import type { MqttCompanion } from './mqtt-companion.ts'

export interface FleetWatcherDeps {
  settings: MqttSettings
  services: () => Services
  log: Logger
  /** How often this device publishes its summary (MQTT_SUMMARY_INTERVAL_MS). */
  summaryMs: number
  /** Upload rate of a console push per target device (FLEET_PUSH_MAX_BYTES_PER_SECOND; 0: none). */
  pushMaxBytesPerSecond?: number
}

interface Known {
  state: FleetDeviceView['state']
  registration: { softwareVersion?: string; startedAt?: string; http?: { urls?: string[] } | null } | null
  summary: FleetSummary | null
}

const LATEST_ALARMS = 3
const THUMBNAIL_WIDTH = 160
const PARALLEL = 4
const RETRY_NOT_REGISTERED_MS = 500
const parse = (payload: Buffer): Record<string, unknown> | null => {
  try {
    const value = JSON.parse(payload.toString('utf8'))
    return value && typeof value === 'object' ? value : null
  } catch {
    return null
  }
}

/**
 * The fleet as this device sees it on its broker (docs/deployment.md "Fleet view"): it
 * publishes its own retained summary beside its registration and status, reads every
 * device's three retained topics, and runs routes on other devices through their request
 * topics (spec 5.6), as `device-cli fleet call` does.
 */
export class FleetWatcher implements MqttCompanion, FleetService, FleetLink {
  private client: MqttClient | null = null
  private readonly prefix: string
  private readonly devices = new Map<string, Known>()
  private readonly answers = new Map<string, (answer: { status: number; envelope: Envelope }) => void>()
  private readonly responseTopics = new Set<string>()
  private readonly thumbnails = new Map<string, string | null>()
  private readonly watchers = new Set<() => void>()
  private readonly pushes: FleetPushes
  private timer: NodeJS.Timeout | null = null
  private stopped = false

  constructor(private readonly deps: FleetWatcherDeps) {
    this.prefix = deps.settings.topicPrefix
    this.pushes = new FleetPushes({ link: this, selfId: deps.settings.clientId, log: deps.log, maxBytesPerSecond: deps.pushMaxBytesPerSecond })
  }

  subscriptions() {
    return ['registration', 'status', 'summary'].map((kind) => `${this.prefix}/+/${kind}`)
  }

  start() {
    this.timer = setInterval(() => void this.publishSummary(), this.deps.summaryMs)
    this.timer.unref()
  }

  registered(client: MqttClient) {
    this.client = client
    this.responseTopics.clear()
    void this.publishSummary()
  }

  message(topic: string, payload: Buffer) {
    const levels = topic.split('/')
    if (levels.length !== this.prefix.split('/').length + 2) return
    const [deviceId, kind] = levels.slice(-2) as [string, string]
    const body = parse(payload)
    if (kind === 'response') {
      const deliver = typeof body?.requestId === 'string' ? this.answers.get(body.requestId) : undefined
      if (deliver && typeof body?.status === 'number' && body.envelope) deliver({ status: body.status, envelope: body.envelope as Envelope })
      return
    }
    if (!['registration', 'status', 'summary'].includes(kind)) return
    const device = this.devices.get(deviceId) ?? { state: 'unknown', registration: null, summary: null }
    // An empty retained payload clears the topic (a device removed from the fleet).
    if (kind === 'registration') device.registration = body && typeof body.softwareVersion === 'string' ? body as Known['registration'] : null
    else if (kind === 'status') device.state = body?.state === 'online' ? 'online' : body?.state === 'offline' ? 'offline' : 'unknown'
    else device.summary = body && typeof body.uptimeSeconds === 'number' ? body as unknown as FleetSummary : null
    if (!device.registration && device.state === 'unknown' && !device.summary) this.devices.delete(deviceId)
    else this.devices.set(deviceId, device)
    for (const watcher of this.watchers) watcher()
  }

  private connected(): MqttClient {
    const client = this.client
    if (!client?.connected || this.stopped) throw new ApiError('MqttNotRegistered', { details: { reason: 'the fleet is read on this device\'s MQTT connection, which is not up (System/SetMqttParam)' } })
    return client
  }

  list(): FleetDeviceView[] {
    this.connected()
    return [...this.devices.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([deviceId, d]) => ({
      deviceId,
      self: deviceId === this.deps.settings.clientId,
      state: d.state,
      softwareVersion: d.registration?.softwareVersion ?? null,
      startedAt: d.registration?.startedAt ?? null,
      consoleUrl: d.registration?.http?.urls?.[0] ?? null,
      summary: d.summary,
    }))
  }

  /** A device of the fleet as a push sees it: only what its retained registration and status say. */
  device(deviceId: string): PushTarget | null {
    const d = this.devices.get(deviceId)
    if (!d) return null
    const r = d.registration
    return { deviceId, state: d.state, registration: r?.softwareVersion ? { softwareVersion: r.softwareVersion, startedAt: r.startedAt, http: r.http ?? null } : null }
  }

  waitFor(deviceId: string, match: (device: PushTarget) => boolean, timeoutMs: number): Promise<PushTarget | null> {
    return waitForMatch(this.watchers, () => this.device(deviceId), match, timeoutMs)
  }

  /**
   * Runs a route on a device through its request topic (spec 5.6); null when no answer came in
   * time. A refusal because the device was not yet registered again (retryable) is retried, as
   * the CLI does.
   */
  async request(deviceId: string, path: string, body: unknown, timeoutMs: number): Promise<{ status: number; envelope: Envelope } | null> {
    const client = this.connected()
    const base = `${this.prefix}/${deviceId}`
    if (!this.responseTopics.has(base)) {
      await client.subscribeAsync(`${base}/response`, { qos: 1 })
      this.responseTopics.add(base)
    }
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const requestId = `fleet-${randomUUID()}`
      const answer = await new Promise<{ status: number; envelope: Envelope } | null>((resolve) => {
        const timer = setTimeout(() => { this.answers.delete(requestId); resolve(null) }, Math.max(0, deadline - Date.now()))
        this.answers.set(requestId, (received) => { clearTimeout(timer); this.answers.delete(requestId); resolve(received) })
        client.publishAsync(`${base}/request`, JSON.stringify({ requestId, path, body }), { qos: 1 }).catch(() => { /* the deadline answers */ })
      })
      const retry = answer?.envelope.resMsg?.[0]?.messageKey === 'api.error.MqttNotRegistered' && Date.now() + RETRY_NOT_REGISTERED_MS < deadline
      if (!retry) return answer
      await new Promise((resolve) => setTimeout(resolve, RETRY_NOT_REGISTERED_MS))
    }
  }

  async call(deviceIds: string[], path: string, body: unknown, timeoutMs: number): Promise<FleetCallResult[]> {
    this.connected()
    const results: FleetCallResult[] = new Array(deviceIds.length)
    let next = 0
    const one = async (deviceId: string): Promise<FleetCallResult> => {
      const device = this.devices.get(deviceId)
      if (!device) return { deviceId, outcome: 'unknown-device', ok: false, status: null, envelope: null }
      // As the CLI: a request to an offline device would wait in its broker session and be refused on its return.
      if (device.state !== 'online') return { deviceId, outcome: 'offline', ok: false, status: null, envelope: null }
      const answer = await this.request(deviceId, path, body, timeoutMs)
      if (!answer) return { deviceId, outcome: 'timeout', ok: false, status: null, envelope: null }
      const ok = answer.envelope.resCode === 1
      return { deviceId, outcome: ok ? 'ok' : answer.envelope.resMsg?.[0]?.messageKey ?? `HTTP ${answer.status}`, ok, status: answer.status, envelope: answer.envelope }
    }
    await Promise.all(Array.from({ length: Math.min(PARALLEL, deviceIds.length) }, async () => {
      while (next < deviceIds.length) {
        const index = next++
        results[index] = await one(deviceIds[index]!)
      }
    }))
    return results
  }

  push(request: FleetPushRequest): FleetPush {
    this.connected()
    return this.pushes.start(request)
  }

  assertCanPush(): void {
    this.connected()
    this.pushes.assertRoom()
  }

  pushStatus(pushId: string): FleetPush {
    return this.pushes.status(pushId)
  }

  /** A small JPEG of an alarm's picture, inline: the Fleet view shows it without a session on this device. */
  private async thumbnail(services: Services, alarmId: string): Promise<string | null> {
    if (this.thumbnails.has(alarmId)) return this.thumbnails.get(alarmId)!
    const made = await services.alarms.picture(alarmId)
      .then(async (file) => (await loadSharp())(file).resize({ width: THUMBNAIL_WIDTH, withoutEnlargement: true }).jpeg({ quality: 60 }).toBuffer())
      .then((jpeg) => `data:image/jpeg;base64,${jpeg.toString('base64')}`, () => null)
    if (this.thumbnails.size > 50) this.thumbnails.clear()
    this.thumbnails.set(alarmId, made)
    return made
  }

  private async summary(services: Services): Promise<FleetSummary> {
    const now = services.clock.now()
    const cameras = await services.cameras.page({ pageNum: 1, pageSize: 500 })
    const tasks = services.streams.list()
    const { count: recent, latest } = await services.events.history.recent('alarm.raised', now - 3_600_000, LATEST_ALARMS)
    const latestAlarms: FleetAlarm[] = []
    for (const row of latest) {
      const p = JSON.parse(row.payload) as Record<string, unknown>
      latestAlarms.push({
        alarmId: String(p.alarmId), time: new Date(row.time).toISOString(), policyName: (p.policyName as string | null) ?? null, label: (p.label as string | null) ?? null,
        message: String(p.message ?? ''), cameraId: (p.cameraId as string | null) ?? null, taskId: String(p.taskId),
        thumbnail: p.snapshotUrl ? await this.thumbnail(services, String(p.alarmId)) : null,
      })
    }
    return {
      publishedAt: new Date(now).toISOString(),
      softwareVersion: services.process.softwareVersion,
      uptimeSeconds: Math.max(0, Math.floor((now - services.process.startedAt) / 1000)),
      cameras: { total: cameras.total, online: cameras.rows.filter((c) => c.status === 'online').length },
      tasks: { total: tasks.length, running: tasks.filter((t) => t.state === 'running').length },
      alarmsLastHour: recent,
      diskAvailableBytes: (await storageOf(services.config.dataPath)).availableBytes,
      latestAlarms,
    }
  }

  private async publishSummary() {
    const client = this.client
    if (!client?.connected || this.stopped) return
    try {
      const summary = await this.summary(this.deps.services())
      await client.publishAsync(`${this.prefix}/${this.deps.settings.clientId}/summary`, JSON.stringify(summary), { qos: 1, retain: true })
    } catch (error) {
      this.deps.log.warn({ err: { message: (error as Error).message } }, 'fleet summary not published')
    }
  }

  async stop() {
    this.stopped = true
    if (this.timer) clearInterval(this.timer)
    this.client = null
  }
}
