import type { MqttClient } from 'mqtt'
import { storageOf, systemMemory, cpuLoad } from '../../shared/aihost/system.ts'
import { haDiscoveryConfigs, haKey, haTopics } from './ha-configs.ts'
import type { DeviceEvent, MqttSettings } from '../../shared/events/types.ts'
import type { Logger, Services } from '../../shared/handler.ts'
import { DataUrl } from '../../shared/http/data-url.ts'
import { cameraRows, haInventory, policyRows } from './ha-inventory.ts'
import type { MqttCompanion } from './mqtt-companion.ts'

export interface HaDiscoveryDeps {
  /** `haDiscovery` false: no entity, and every config this node left on the broker is cleared. */
  settings: MqttSettings
  services: () => Services
  log: Logger
  refreshMs: number
  imageIntervalMs: number
  /** The console's address for the device block and picture URLs, null until the server listens. */
  httpUrl: () => string | null
}

const EVENT_KINDS = ['object.entered', 'object.left', 'alarm.raised', 'passengerFlow.counted'] as const

/**
 * Publishes Home Assistant MQTT discovery (docs/events.md "Home Assistant MQTT discovery") on
 * the device's own connection: the retained configs of runtime/events/ha-configs.ts, compared
 * every `refreshMs` with the cameras, tasks and policies (a removed entity's config is cleared
 * with an empty retained payload, also one left on the broker by an earlier run), all again
 * after each connect and on Home Assistant's birth message, and the states they point at.
 */
export class HaDiscoveryPublisher implements MqttCompanion {
  private client: MqttClient | null = null
  private readonly topics
  private readonly node: string
  private readonly prefix: string
  /** topic → payload last published on this connection (configs and retained states). */
  private readonly published = new Map<string, string>()
  /** This node's config topics holding a retained config on the broker. */
  private readonly onBroker = new Set<string>()
  /** The configs of the last refresh, null before the first. */
  private current: Map<string, string> | null = null
  private readonly seenLabels = new Map<string, Set<string>>()
  private readonly tracked = new Map<string, Set<string>>()
  private readonly counted = new Map<string, { in: number; out: number }>()
  private unsubscribe: (() => void) | null = null
  private timers: NodeJS.Timeout[] = []
  private running: Promise<void> | null = null
  private again = false
  private stopped = false

  constructor(private readonly deps: HaDiscoveryDeps) {
    this.topics = haTopics(deps.settings.topicPrefix, deps.settings.clientId)
    this.node = haKey(deps.settings.clientId)
    this.prefix = deps.settings.haDiscoveryPrefix
  }

  private get enabled() {
    return this.deps.settings.haDiscovery
  }

  subscriptions() {
    return [...(this.enabled ? [`${this.prefix}/status`] : []), `${this.prefix}/+/${this.node}/+/config`]
  }

  start() {
    if (!this.enabled) return
    this.unsubscribe = this.deps.services().events.subscribe(EVENT_KINDS, (event) => this.onEvent(event))
    this.timers.push(setInterval(() => this.refresh(), this.deps.refreshMs))
    if (this.deps.imageIntervalMs > 0) this.timers.push(setInterval(() => void this.publishImages(), this.deps.imageIntervalMs))
    for (const timer of this.timers) timer.unref()
  }

  registered(client: MqttClient) {
    this.client = client
    this.published.clear()
    this.refresh()
    if (this.enabled && this.deps.imageIntervalMs > 0) void this.publishImages()
  }

  message(topic: string, payload: Buffer) {
    if (topic === `${this.prefix}/status`) {
      // Home Assistant's birth message: it (re)started and reads discovery now.
      if (payload.toString('utf8') === 'online') {
        this.published.clear()
        this.refresh()
      }
      return
    }
    const levels = topic.split('/')
    if (levels.at(-3) !== this.node || levels.at(-1) !== 'config') return
    if (payload.length === 0) this.onBroker.delete(topic)
    else this.onBroker.add(topic)
    // A config this device no longer has (a camera deleted while it was down): cleared.
    if (payload.length > 0 && this.current && !this.current.has(topic)) this.publish(topic, '')
  }

  /** The console of this device: the device block's configuration URL. */
  private consoleUrl() {
    const base = this.deps.httpUrl()
    return base ? `${base}/console/` : null
  }

  /** Runs one refresh at a time; a request meanwhile runs one more afterwards. */
  private refresh() {
    if (this.running) {
      this.again = true
      return
    }
    this.running = this.refreshOnce()
      .catch((error: Error) => this.deps.log.warn({ err: { message: error.message } }, 'home assistant discovery not published'))
      .finally(() => {
        this.running = null
        if (this.again && !this.stopped) {
          this.again = false
          this.refresh()
        }
      })
  }

  private async refreshOnce() {
    if (!this.client?.connected || this.stopped) return
    if (!this.enabled) {
      // Switched off: nothing is announced, and what the broker still holds is cleared (message()).
      this.current = new Map()
      for (const topic of this.onBroker) this.publishOnce(topic, '')
      return
    }
    const services = this.deps.services()
    const inventory = await haInventory(services, this.seenLabels)
    const configs = haDiscoveryConfigs({
      topicPrefix: this.deps.settings.topicPrefix, clientId: this.deps.settings.clientId, discoveryPrefix: this.prefix,
      softwareVersion: services.process.softwareVersion, configurationUrl: this.consoleUrl(),
    }, inventory)
    const next = new Map(configs.map((c) => [c.topic, JSON.stringify(c.payload)]))
    const previous = this.current
    this.current = next
    for (const topic of new Set([...this.onBroker, ...(previous?.keys() ?? [])])) if (!next.has(topic)) this.publishOnce(topic, '')
    for (const [topic, payload] of next) this.publishOnce(topic, payload)

    // States, after the configs: HA reads the retained state when it subscribes.
    for (const task of services.streams.list()) {
      this.publishOnce(this.topics.taskState(task.taskId), JSON.stringify({ state: task.state, processedFps: Math.round(task.processedFps * 10) / 10, enabled: task.enabled ? 'true' : 'false' }))
    }
    for (const task of inventory.tasks) {
      for (const label of task.labels) this.publishOnce(this.topics.taskObject(task.taskId, label), (this.tracked.get(`${task.taskId}\0${label}`)?.size ?? 0) > 0 ? 'ON' : 'OFF')
      for (const counter of task.counters) this.publishOnce(this.topics.taskCounter(task.taskId, counter.counterId), JSON.stringify(this.counted.get(`${task.taskId}\0${counter.counterId}`) ?? { in: 0, out: 0 }))
    }
    const policies = await policyRows(services)
    for (const policy of policies) this.publishOnce(this.topics.policyState(policy.policyId), policy.enabled ? 'true' : 'false')
    const live = new Set(inventory.tasks.map((t) => t.taskId))
    for (const key of [...this.tracked.keys()]) if (!live.has(key.split('\0')[0]!)) this.tracked.delete(key)
    await this.publishHealth(services)
  }

  private async publishHealth(services: Services) {
    const [memory, storage, inference] = await Promise.all([systemMemory(), storageOf(services.config.dataPath), services.device.inference().catch(() => null)])
    this.publish(this.topics.health, JSON.stringify({
      cpuLoad1m: Math.round(cpuLoad().loadAverage1m * 100) / 100,
      memoryUsedPercent: memory.usedPercent,
      diskAvailableBytes: storage.availableBytes,
      sidecar: inference?.sidecar.state === 'running' ? 'ON' : 'OFF',
    }), true)
  }

  private onEvent(event: DeviceEvent) {
    const p = event.payload as Record<string, unknown>
    const taskId = typeof p.taskId === 'string' ? p.taskId : null
    if (!taskId) return
    if (event.kind === 'object.entered' || event.kind === 'object.left') {
      const label = String(p.label)
      const key = `${taskId}\0${label}`
      const objects = this.tracked.get(key) ?? new Set<string>()
      if (event.kind === 'object.entered') objects.add(String(p.objectId))
      else objects.delete(String(p.objectId))
      this.tracked.set(key, objects)
      const seen = this.seenLabels.get(taskId) ?? new Set<string>()
      if (!seen.has(label)) {
        // A label the algorithm did not list: its binary sensor appears now.
        this.seenLabels.set(taskId, seen.add(label))
        if (!this.current?.has(`${this.prefix}/binary_sensor/${this.node}/task_${haKey(taskId)}_${haKey(label)}/config`)) this.refresh()
      }
      this.publishOnce(this.topics.taskObject(taskId, label), objects.size > 0 ? 'ON' : 'OFF')
    } else if (event.kind === 'passengerFlow.counted') {
      const key = `${taskId}\0${String(p.counterId)}`
      const total = this.counted.get(key) ?? { in: 0, out: 0 }
      total.in += Number(p.in) || 0
      total.out += Number(p.out) || 0
      this.counted.set(key, total)
      this.publishOnce(this.topics.taskCounter(taskId, String(p.counterId)), JSON.stringify(total))
    } else if (event.kind === 'alarm.raised') {
      const base = this.deps.httpUrl()
      const picture = typeof p.snapshotUrl === 'string' ? p.snapshotUrl : null
      // HA's event entity: `event_type` is one of `event_types`; the other fields become attributes.
      this.publish(this.topics.taskAlarm(taskId), JSON.stringify({
        event_type: p.alarmType === 'logic' ? 'logic' : 'policy',
        alarmId: p.alarmId, message: p.message, policyId: p.policyId, policyName: p.policyName, label: p.label, cameraId: p.cameraId, count: p.count,
        name: p.name ?? null, time: event.time, eventId: event.id,
        pictureUrl: picture && base && picture.startsWith('/') ? base + picture : picture,
      }), false)
    }
  }

  /** Each online camera's latest frame, as raw JPEG bytes on its image topic (HA's MQTT camera). */
  private async publishImages() {
    if (!this.client?.connected || this.stopped) return
    try {
      const services = this.deps.services()
      for (const camera of await cameraRows(services)) {
        if (camera.status !== 'online') continue
        const capture = await services.cameras.capture(camera.cameraId).catch(() => null)
        // A data: URL (spec 2.6 fullPicture); a URL of a file service is not published.
        const picture = capture?.picture
        if (picture instanceof DataUrl) this.publish(this.topics.cameraImage(camera.cameraId), picture.bytes, true)
        else if (typeof picture === 'string' && picture.startsWith('data:image/jpeg;base64,')) this.publish(this.topics.cameraImage(camera.cameraId), Buffer.from(picture.slice(23), 'base64'), true)
      }
    } catch (error) {
      this.deps.log.warn({ err: { message: (error as Error).message } }, 'home assistant camera images not published')
    }
  }

  /** A retained message, unless the same payload was already published on this connection. */
  private publishOnce(topic: string, payload: string) {
    if (this.published.get(topic) === payload) return
    this.published.set(topic, payload)
    this.publish(topic, payload, true)
  }

  private publish(topic: string, payload: string | Buffer, retain = true) {
    const client = this.client
    if (!client?.connected || this.stopped) return
    client.publishAsync(topic, payload, { qos: 1, retain }).catch((error: Error) => {
      this.published.delete(topic)
      this.deps.log.warn({ err: { message: error.message }, topic }, 'home assistant message not published')
    })
  }

  async stop() {
    this.stopped = true
    for (const timer of this.timers) clearInterval(timer)
    this.unsubscribe?.()
    await this.running
    this.client = null
  }
}
