import type { IClientOptions, MqttClient } from 'mqtt'
import { eventKindNames } from '../../shared/events/kinds.ts'
import { redactUrl } from '../../shared/events/present.ts'
import type { DeviceEvent, MqttSettings } from '../../shared/events/types.ts'
import type { Logger, Services } from '../../shared/handler.ts'
import { throttledSave, type CursorStore } from './cursors.ts'
import { MqttRequests, type RequestRouter } from './mqtt-requests.ts'
import { mqttTopics } from './mqtt-topics.ts'
import { eventJson, type Outbox } from './outbox.ts'
import { Tail } from './tail.ts'
import type { MqttTlsMaterial } from './mqtt-tls.ts'
import type { DeliveryRecorder } from '../metrics/index.ts'
import type { MqttCompanion } from './mqtt-companion.ts'

const MAX_IN_FLIGHT = 2000

export interface MqttChannelDeps {
  settings: MqttSettings
  /** The TLS files of the settings, read and checked (mqtt-tls.ts). */
  tls: MqttTlsMaterial
  outbox: Outbox
  cursors: CursorStore
  services: () => Services
  router: RequestRouter | null
  log: Logger
  pollMs: number
  reconnectMinMs: number
  reconnectMaxMs: number
  /** Requests run at once; more are refused (MqttBusy) rather than queued without bound. */
  maxRequestsInFlight: number
  /** spec 8: the JSON request body limit, which a request's payload is held to as over HTTP. */
  maxRequestBytes: number
  registration: () => Record<string, unknown>
  /** Every publish's outcome (docs/metrics.md "Metrics"). */
  record: DeliveryRecorder
  /** Publish and read beside the events on this connection (Home Assistant discovery, the fleet: runtime/events/ha-discovery.ts, fleet.ts). */
  companions?: MqttCompanion[]
}

export type MqttState = 'connecting' | 'registered' | 'disconnected'

/**
 * The MQTT channel: registers the device (retained registration message, retained
 * online/offline status with a last will), publishes events to per-kind topics with QoS 1
 * once registered, reconnects with exponential backoff, and runs requests from the request
 * topic (mqtt-requests.ts), answering on the response topic. Topics: mqtt-topics.ts.
 */
export class MqttChannel {
  state: MqttState = 'connecting'
  lastError: string | null = null
  private client: MqttClient | null = null
  private tail: Tail | null = null
  private saveCursor: ReturnType<typeof throttledSave> | null = null
  private readonly topics
  /** Requests from the request topic (mqtt-requests.ts). */
  private readonly requests: MqttRequests
  private stopped = false
  // Publishes are pipelined: up to MAX_IN_FLIGHT wait for their PUBACK while the next are
  // sent; the cursor saved is the highest id below which every event was acknowledged.
  private acked = 0
  private pending: { id: number; done: boolean }[] = []
  private ackWaiter: (() => void) | null = null

  constructor(private readonly deps: MqttChannelDeps) {
    this.topics = mqttTopics(deps.settings.topicPrefix, deps.settings.clientId)
    this.requests = new MqttRequests(deps)
  }

  private get companions() {
    return this.deps.companions ?? []
  }

  /** Highest event id up to which every event was acknowledged by the broker. */
  get deliveredId(): number {
    return this.acked
  }

  async start(): Promise<void> {
    const { settings, outbox, cursors, log } = this.deps
    const options: IClientOptions = {
      clientId: settings.clientId,
      // A persistent session: QoS 1 requests sent while the device is away are kept by the
      // broker and arrive right after reconnecting, before registration, and are refused.
      clean: false,
      reconnectPeriod: this.deps.reconnectMinMs,
      connectTimeout: 10_000,
      keepalive: 30,
      will: { topic: this.topics.status, payload: Buffer.from(JSON.stringify({ state: 'offline', clientId: settings.clientId })), qos: 1, retain: true },
      rejectUnauthorized: settings.rejectUnauthorized,
      ...(settings.username ? { username: settings.username } : {}),
      ...(settings.password ? { password: settings.password } : {}),
      ...this.deps.tls,
    }
    // mqtt.js is loaded by the first connection, not by every start (bench/README.md, device-start).
    const { default: mqtt } = await import('mqtt')
    const from = await cursors.getOrCreate('mqtt', outbox.lastId)
    this.acked = from
    this.saveCursor = throttledSave((id) => cursors.set('mqtt', id))
    this.tail = new Tail({
      name: 'mqtt',
      outbox,
      from,
      batch: 500,
      pollMs: this.deps.pollMs,
      retryMs: 1000,
      log,
      deliver: (events) => this.publishEvents(events),
    })
    const client = mqtt.connect(settings.url, options)
    this.client = client
    client.on('connect', () => void this.register(client))
    client.on('close', () => this.onDisconnected())
    client.on('offline', () => this.onDisconnected())
    client.on('error', (error) => {
      this.lastError = error.message
      log.warn({ err: { message: error.message }, url: redactUrl(settings.url) }, 'mqtt error')
    })
    client.on('message', (topic, payload) => {
      if (topic === this.topics.request) void this.requests.handle(this.client!, this.topics.response, this.state === 'registered', payload)
      else for (const companion of this.companions) companion.message(topic, payload)
    })
    this.tail.start()
    for (const companion of this.companions) companion.start()
    log.info({ url: redactUrl(settings.url), clientId: settings.clientId }, 'mqtt connecting')
  }

  private onDisconnected() {
    if (this.state === 'registered') this.deps.log.warn({ clientId: this.deps.settings.clientId }, 'mqtt disconnected')
    this.state = this.stopped ? 'disconnected' : 'connecting'
    // Exponential backoff between reconnect attempts; reset on success.
    const client = this.client
    if (client) client.options.reconnectPeriod = Math.min(this.deps.reconnectMaxMs, Math.max(this.deps.reconnectMinMs, (client.options.reconnectPeriod ?? 0) * 2))
  }

  private async register(client: MqttClient) {
    this.state = 'connecting'
    client.options.reconnectPeriod = this.deps.reconnectMinMs
    try {
      await client.subscribeAsync(this.topics.request, { qos: 1 })
      const companionTopics = this.companions.flatMap((c) => c.subscriptions())
      // QoS 0: retained messages still arrive on subscribing, and the broker queues none of them in
      // the persistent session while the device is away (it reads the current ones when back).
      if (companionTopics.length > 0) await client.subscribeAsync(companionTopics, { qos: 0 })
      await this.publishRegistrationOn(client)
      await client.publishAsync(this.topics.status, JSON.stringify({ state: 'online', clientId: this.deps.settings.clientId }), { qos: 1, retain: true })
      if (client !== this.client || this.stopped) return
      this.state = 'registered'
      this.lastError = null
      this.deps.log.info({ clientId: this.deps.settings.clientId, topics: this.topics.registration }, 'mqtt registered')
      this.tail?.kick()
      for (const companion of this.companions) companion.registered(client)
    } catch (error) {
      this.lastError = (error as Error).message
      this.deps.log.warn({ err: { message: this.lastError } }, 'mqtt registration failed')
    }
  }

  private publishRegistrationOn(client: MqttClient) {
    const registration = { ...this.deps.registration(), clientId: this.deps.settings.clientId, topics: { ...this.topics, event: this.topics.event('<kind>') }, eventKinds: eventKindNames, registeredAt: new Date().toISOString() }
    return client.publishAsync(this.topics.registration, JSON.stringify(registration), { qos: 1, retain: true })
  }

  /** Publishes the registration again (its content changed); a later connect publishes it anyway. */
  publishRegistration() {
    const client = this.client
    if (!client?.connected || this.stopped) return
    this.publishRegistrationOn(client).catch((error: Error) => this.deps.log.warn({ err: { message: error.message } }, 'mqtt registration not published again'))
  }

  private async publishEvents(events: DeviceEvent[]) {
    const client = this.client
    if (!client || this.state !== 'registered') throw new Error('mqtt not registered')
    for (const event of events) {
      const entry = { id: event.id, done: false }
      this.pending.push(entry)
      // QoS 1: resolves on PUBACK. While disconnected, mqtt.js keeps it and resends it after
      // reconnecting (persistent session); if the client is replaced, reading rewinds.
      client.publishAsync(this.topics.event(event.kind), eventJson(event), { qos: 1 }).then(() => {
        entry.done = true
        this.deps.record('delivered')
        this.advanceAcked()
      }, (error: Error) => {
        // Read again from the last acknowledged event and published again.
        this.deps.record('retried')
        if (client !== this.client) return
        this.lastError = error.message
        this.pending = []
        this.tail?.rewind(this.acked)
        this.ackWaiter?.()
      })
    }
    while (this.pending.length > MAX_IN_FLIGHT && client === this.client && !this.stopped) await new Promise<void>((resolve) => (this.ackWaiter = resolve))
  }

  /** One message (QoS 1) on the device's own connection, once registered: alarm policies' MQTT action. */
  async publish(topic: string, payload: string): Promise<void> {
    const client = this.client
    if (!client || this.state !== 'registered') throw new Error(`mqtt ${this.state}`)
    await client.publishAsync(topic, payload, { qos: 1 })
  }

  private advanceAcked() {
    const before = this.acked
    while (this.pending.length > 0 && this.pending[0]!.done) this.acked = this.pending.shift()!.id
    if (this.acked !== before) void this.saveCursor?.(this.acked).catch(() => {})
    if (this.pending.length <= MAX_IN_FLIGHT) this.ackWaiter?.()
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.requests.abortAll()
    this.ackWaiter?.()
    await this.tail?.stop()
    for (const companion of this.companions) await companion.stop()
    const client = this.client
    this.client = null
    if (!client) return
    if (client.connected) {
      // A clean stop says so; the last will covers a crash.
      await Promise.race([
        client.publishAsync(this.topics.status, JSON.stringify({ state: 'offline', clientId: this.deps.settings.clientId }), { qos: 1, retain: true }).catch(() => {}),
        new Promise((resolve) => setTimeout(resolve, 1000).unref()),
      ])
    }
    await client.endAsync(true).catch(() => {})
    await this.saveCursor?.flush().catch(() => {})
    this.state = 'disconnected'
  }
}
