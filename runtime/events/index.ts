import { count } from 'drizzle-orm'
import type { Client } from '@libsql/client'
import type { Config } from '../../shared/config.ts'
import type { Db } from '../db/client.ts'
import { webhookDeadLetters } from '../../shared/db/schema/index.ts'
import type { ChannelSettingsService, ChannelStatus, EventsService, MqttSettings, WebhookSettings } from '../../shared/events/types.ts'
import { invalidParam, isApiError } from '../../shared/errors/index.ts'
import type { Clock, Logger, Services } from '../../shared/handler.ts'
import { CursorStore } from './cursors.ts'
import { MqttChannel } from './mqtt.ts'
import type { RequestRouter } from './mqtt-requests.ts'
import { loadMqttTls } from './mqtt-tls.ts'
import { HaDiscoveryPublisher } from './ha-discovery.ts'
import { FleetWatcher } from './fleet.ts'
import { EventHistoryQueries } from './history.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { FleetService } from '../../shared/fleet/types.ts'
import type { HttpAdvertisement } from './advertise.ts'
import { Outbox } from './outbox.ts'
import { ChannelSettingsStore } from './settings-store.ts'
import { WebhookTarget } from './webhook.ts'
import { Tail } from './tail.ts'
import { EventWebSocketServer } from './websocket.ts'
import type { DeviceMetrics, EventChannel } from '../metrics/index.ts'
import { monotonicNow } from '../../shared/clock.ts'
import { Mutex } from '../keyed-mutex.ts'

export type { RequestRouter } from './mqtt-requests.ts'

export interface EventChannelDeps {
  db: Db
  /** The libsql client under `db` (the outbox writes its group commits with plain SQL). */
  client: Client
  config: Config
  clock: Clock
  log: Logger
  services: () => Services
  router: RequestRouter | null
  /** Deliveries per channel (docs/metrics.md "Metrics"). */
  metrics: DeviceMetrics
}

const PRUNE_INTERVAL_MS = 60_000

/**
 * The event system of the runtime: the outbox behind `ctx.events`, and the channels that
 * deliver it (WebSocket listener, MQTT, webhook URLs), each with its own cursor. Settings of
 * MQTT and webhook come from the database (System endpoints) over the configuration, and a
 * change restarts just that channel.
 */
export function createEventSystem(deps: EventChannelDeps) {
  const { db, config, clock } = deps
  const log = deps.log.child({ area: 'events' })
  const outbox = new Outbox(db, deps.client, clock, log)
  const cursors = new CursorStore(db, clock.now)
  const store = new ChannelSettingsStore(db, config, clock.now)
  const websocket = new EventWebSocketServer({ host: config.wsHost, port: config.wsPort, outbox, services: deps.services, maxBufferedBytes: config.wsMaxBufferedBytes, maxClients: config.wsMaxClients, pollMs: config.eventPollMs, record: deps.metrics.deliveries('websocket') })
  let mqtt: MqttChannel | null = null
  let fleetWatcher: FleetWatcher | null = null
  let webhooks: WebhookTarget[] = []
  let started = false
  let pruneTimer: NodeJS.Timeout | null = null
  // Reconfigurations run one at a time.
  const applying = new Mutex()
  const serially = <T>(task: () => Promise<T>): Promise<T> => applying.run(task)

  /** The HTTP address, once the server listens (fleet commands upload to it). */
  let http: HttpAdvertisement | null = null
  const registration = () => {
    const services = deps.services()
    return { softwareVersion: services.process.softwareVersion, buildHash: services.process.buildHash, startedAt: new Date(services.process.startedAt).toISOString(), websocketPort: websocket.port, http }
  }

  /** Why the stored MQTT settings are not in use (they failed when the device started), or null. */
  let mqttRejected: string | null = null

  async function applyMqtt(settings: MqttSettings) {
    // Checked before the running channel is touched: a refusal leaves it as it was.
    const tls = settings.enabled && settings.url ? loadMqttTls(settings) : {}
    await mqtt?.stop()
    mqtt = null
    fleetWatcher = null
    mqttRejected = null
    if (!started || !settings.enabled || !settings.url) return
    // Home Assistant discovery rides on the same connection (docs/events.md "Home Assistant MQTT discovery").
    // Also when it is off: it then clears the configs an earlier run left on the broker.
    const companion = new HaDiscoveryPublisher({ settings, services: deps.services, log: log.child({ part: 'ha-discovery' }), refreshMs: config.mqttHaRefreshMs, imageIntervalMs: config.mqttHaImageIntervalMs, httpUrl: () => http?.urls[0] ?? null })
    // The fleet as this device sees it on the broker (docs/deployment.md "Fleet view").
    const fleet = new FleetWatcher({ settings, services: deps.services, log: log.child({ part: 'fleet' }), summaryMs: config.mqttSummaryIntervalMs, pushMaxBytesPerSecond: config.fleetPushMaxBytesPerSecond })
    mqtt = new MqttChannel({ settings, tls, outbox, cursors, services: deps.services, router: deps.router, log, pollMs: config.eventPollMs, reconnectMinMs: config.mqttReconnectMinMs, reconnectMaxMs: config.mqttReconnectMaxMs, maxRequestsInFlight: config.mqttMaxRequestsInFlight, maxRequestBytes: config.jsonBodyLimitBytes, registration, record: deps.metrics.deliveries('mqtt'), companions: [companion, fleet] })
    fleetWatcher = fleet
    await mqtt.start()
  }

  /**
   * A settings change is applied first and stored only once it runs, so a stored setting is
   * one that worked; when applying fails, the previous settings are applied again.
   */
  async function change<S>(prepared: { settings: S; commit(): Promise<void> }, apply: (settings: S) => Promise<void>, previous: S, pointer: string): Promise<S> {
    try {
      await apply(prepared.settings)
    } catch (error) {
      await apply(previous).catch((again: unknown) => log.error({ err: again }, 'the previous channel settings could not be applied again'))
      if (isApiError(error)) throw error
      throw invalidParam(pointer, `could not be applied: ${String((error as Error)?.message ?? error).split('\n')[0]!.slice(0, 200)}`)
    }
    await prepared.commit()
    return prepared.settings
  }

  /** spec: a stored setting never keeps the device from starting; it is reported and left out. */
  async function startChannel(setting: 'mqtt' | 'webhook', apply: () => Promise<void>) {
    try {
      await apply()
    } catch (error) {
      const reason = String((error as Error)?.message ?? error).split('\n')[0]!.slice(0, 300)
      if (setting === 'mqtt') mqttRejected = reason
      log.error({ setting, reason }, 'stored channel settings could not be applied; the device runs without them')
      await outbox.emit('settings.rejected', { setting, reason }).catch((e: unknown) => log.error({ err: e }, 'settings.rejected event not written'))
    }
  }

  async function applyWebhook(settings: WebhookSettings) {
    await Promise.all(webhooks.map((w) => w.stop()))
    webhooks = []
    if (!started || !settings.enabled) return
    webhooks = settings.urls.map((url) => new WebhookTarget({ url, settings, outbox, cursors, db, clock, log, pollMs: config.eventPollMs, record: deps.metrics.deliveries('webhook') }))
    for (const target of webhooks) await target.start()
  }

  async function prune() {
    try {
      const removed = await outbox.prune(config.eventRetentionMs, config.eventRetentionMaxRows)
      if (removed > 0) log.info({ removed }, 'pruned old events from the outbox')
    } catch (error) {
      log.error({ err: error }, 'pruning the outbox failed')
    }
  }

  const settings: ChannelSettingsService = {
    getMqtt: () => store.mqtt(),
    getWebhook: () => store.webhook(),
    setMqtt: (patch) => serially(async () => change(await store.prepareMqtt(patch), applyMqtt, await store.mqtt(), '/url')),
    setWebhook: (patch) => serially(async () => change(await store.prepareWebhook(patch), applyWebhook, await store.webhook(), '/urls')),
    async status(): Promise<ChannelStatus> {
      const [dead] = await db.select({ n: count() }).from(webhookDeadLetters)
      return {
        mqtt: mqtt ? { state: mqtt.state, lastError: mqtt.lastError, deliveredId: mqtt.deliveredId }
          : mqttRejected ? { state: 'rejected', lastError: mqttRejected, deliveredId: 0 } : { state: 'disabled', lastError: null, deliveredId: 0 },
        webhook: { urls: webhooks.map((w) => ({ url: w.url, deliveredId: w.deliveredId, lastError: w.lastError })), deadLetters: dead?.n ?? 0 },
        websocket: { port: websocket.port, clients: websocket.clients },
        outbox: { lastId: outbox.lastId },
      }
    },
  }

  /** Events not yet delivered per channel (a disabled channel has none). */
  const backlog = (): Record<EventChannel, number> => {
    const lastId = outbox.lastId
    return {
      websocket: websocket.backlog(lastId),
      mqtt: mqtt ? Math.max(0, lastId - mqtt.deliveredId) : 0,
      webhook: webhooks.reduce((sum, w) => sum + Math.max(0, lastId - w.deliveredId), 0),
    }
  }

  // In-process subscribers (EventsService.subscribe): a tail each, from the newest event when
  // the system starts (or when they subscribe later); not persisted.
  const subscribers = new Set<{ tail: Tail | null; open(): Tail }>()
  const subscribe: EventsService['subscribe'] = (kinds, listener) => {
    const subscriber = {
      tail: null as Tail | null,
      open: () => new Tail({
        outbox, from: outbox.lastId, kinds, pollMs: config.eventPollMs, log, name: 'subscriber',
        deliver: async (batch) => {
          for (const event of batch) {
            try {
              await listener(event)
            } catch (error) {
              log.error({ err: error, eventId: event.id, kind: event.kind }, 'an event subscriber failed')
            }
          }
        },
      }),
    }
    subscribers.add(subscriber)
    if (started) (subscriber.tail = subscriber.open()).start()
    return () => {
      subscribers.delete(subscriber)
      void subscriber.tail?.stop()
    }
  }

  const noFleet = () => new ApiError('MqttNotRegistered', { details: { reason: 'MQTT is not configured on this device (System/SetMqttParam): the fleet is read on its broker' } })
  const fleet: FleetService = {
    list: () => { if (!fleetWatcher) throw noFleet(); return fleetWatcher.list() },
    call: (deviceIds, path, body, timeoutMs) => fleetWatcher ? fleetWatcher.call(deviceIds, path, body, timeoutMs) : Promise.reject(noFleet()),
    push: (request) => { if (!fleetWatcher) throw noFleet(); return fleetWatcher.push(request) },
    assertCanPush: () => { if (!fleetWatcher) throw noFleet(); fleetWatcher.assertCanPush() },
    pushStatus: (pushId) => { if (!fleetWatcher) throw noFleet(); return fleetWatcher.pushStatus(pushId) },
  }

  const events: EventsService = {
    emit: (kind, payload, options) => outbox.emit(kind, payload, options),
    settings,
    subscribe,
    fleet,
    history: new EventHistoryQueries(db),
  }

  const component = {
    name: 'events',
    async start() {
      await outbox.init()
      await prune()
      started = true
      for (const subscriber of subscribers) (subscriber.tail = subscriber.open()).start()
      await websocket.start()
      log.info({ port: websocket.port, host: config.wsHost }, 'events websocket listening')
      await serially(async () => {
        await startChannel('mqtt', async () => applyMqtt(await store.mqtt()))
        await startChannel('webhook', async () => applyWebhook(await store.webhook()))
      })
      pruneTimer = setInterval(() => void prune(), PRUNE_INTERVAL_MS)
      pruneTimer.unref()
    },
    async stop() {
      if (pruneTimer) clearInterval(pruneTimer)
      // Give reachable channels a moment to deliver the last events (device.stopping);
      // whatever is left is delivered after the next start (the cursors are persisted).
      const target = outbox.lastId
      const behind = () => [
        ...(mqtt?.state === 'registered' ? [mqtt.deliveredId] : []),
        ...webhooks.filter((w) => w.lastError === null).map((w) => w.deliveredId),
      ].some((id) => id < target)
      const deadline = monotonicNow() + 2000
      while (behind() && monotonicNow() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
      await serially(async () => {
        started = false
        await Promise.all([mqtt?.stop(), ...webhooks.map((w) => w.stop()), websocket.stop(), ...[...subscribers].map((s) => s.tail?.stop())])
        mqtt = null
        webhooks = []
      })
    },
  }

  /** Adds the HTTP address to the registration and publishes it again while connected. */
  const advertiseHttp = (address: HttpAdvertisement) => {
    http = address
    mqtt?.publishRegistration()
  }

  /** Publishes on the device's broker connection (alarm policies' MQTT action); fails while it is not registered. */
  const publish = (topic: string, payload: string): Promise<void> => mqtt ? mqtt.publish(topic, payload) : Promise.reject(new Error('mqtt is not configured'))

  return { events, component, outbox, websocket, backlog, advertiseHttp, publish }
}
