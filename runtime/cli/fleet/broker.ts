import mqtt, { type IClientOptions, type MqttClient } from 'mqtt'
import { uuid } from '../../client/client.ts'
import type { Envelope } from '../../client/types.ts'
import { redactUrl } from '../../../shared/events/present.ts'
import { waitForMatch } from '../../client/wait-for-match.ts'
import { BrokerError } from '../exit-codes.ts'

/** How the CLI reaches the broker the devices register on (docs/deployment.md "Several devices"). */
export interface BrokerOptions {
  url: string
  username?: string
  /** Broker password: sent to the broker only, never printed. */
  password?: string
  topicPrefix: string
  /** PEM CA bundle for mqtts/wss brokers. */
  ca?: Buffer
}

/** The retained registration a device publishes (docs/events.md "MQTT"); fields may be added. */
export interface Registration {
  clientId: string
  softwareVersion: string
  buildHash: string
  startedAt: string
  registeredAt: string
  websocketPort: number
  http: { port: number; urls: string[] } | null
}

export interface FleetDevice {
  deviceId: string
  /** From the retained status topic: the device says online; its last will (or clean stop) says offline. */
  state: 'online' | 'offline' | 'unknown'
  registration: Registration | null
}

/** A device's answer on its response topic (spec 5.6). */
export interface MqttAnswer {
  status: number
  envelope: Envelope
}

const SYNC_TIMEOUT_MS = 3000
/** A request that reached the device between its reconnect and its registration is refused as retryable (docs/events.md "MQTT"). */
const NOT_REGISTERED = 'api.error.MqttNotRegistered'
const RETRY_NOT_REGISTERED_MS = 500

const parse = (payload: Buffer): unknown => {
  try {
    return JSON.parse(payload.toString('utf8'))
  } catch {
    return null
  }
}

/**
 * The CLI's view of the devices on one broker: their retained registrations and statuses, kept
 * current while connected, and requests through the MQTT request transport (spec 5.6): a
 * request carries no mtk — the device trusts that transport, so who may publish to
 * `<prefix>/<device>/request` is decided by the broker's authentication and ACLs.
 */
export class FleetBroker {
  private readonly devices = new Map<string, FleetDevice>()
  private readonly watchers = new Set<() => void>()
  private readonly answers = new Map<string, (answer: MqttAnswer) => void>()
  private readonly responseTopics = new Set<string>()

  private constructor(private readonly client: MqttClient, private readonly prefix: string) {
    client.on('message', (topic, payload) => this.receive(topic, payload))
  }

  /** Connects and reads every retained registration and status. */
  static async connect(options: BrokerOptions): Promise<FleetBroker> {
    const connection: IClientOptions = {
      clientId: `device-cli-${uuid().slice(0, 8)}`,
      clean: true,
      connectTimeout: 10_000,
      reconnectPeriod: 1000,
      ...(options.username ? { username: options.username } : {}),
      ...(options.password ? { password: options.password } : {}),
      ...(options.ca ? { ca: options.ca } : {}),
    }
    let client: MqttClient
    try {
      client = await mqtt.connectAsync(options.url, connection, false)
    } catch (error) {
      throw new BrokerError(`cannot reach the broker at ${redactUrl(options.url)}: ${(error as Error).message}`)
    }
    const broker = new FleetBroker(client, options.topicPrefix)
    try {
      await broker.sync(connection.clientId!)
    } catch (error) {
      await broker.close()
      throw error
    }
    return broker
  }

  /**
   * Subscribes to every registration and status and to a topic of its own (`<prefix>/<its client
   * id>/sync`, inside what an ACL `pattern readwrite <prefix>/%c/#` allows), then waits for its
   * own message there: the broker sends the retained messages of a subscription before later
   * messages, so once it arrives the retained ones have too (bounded, should an ACL drop it).
   */
  private async sync(clientId: string) {
    const syncTopic = `${this.prefix}/${clientId}/sync`
    try {
      const granted = await this.client.subscribeAsync([`${this.prefix}/+/registration`, `${this.prefix}/+/status`, syncTopic], { qos: 0 })
      const refused = granted.find((g) => g.qos === 128)
      if (refused) throw new Error(`the broker refused the subscription to ${refused.topic}`)
    } catch (error) {
      throw new BrokerError(`cannot subscribe on the broker: ${(error as Error).message}`)
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, SYNC_TIMEOUT_MS)
      const onMessage = (topic: string) => { if (topic === syncTopic) done() }
      function done(this: void) {
        clearTimeout(timer)
        client.off('message', onMessage)
        resolve()
      }
      const client = this.client
      client.on('message', onMessage)
      client.publish(syncTopic, '', { qos: 0 })
    })
  }

  private receive(topic: string, payload: Buffer) {
    const levels = topic.split('/')
    const [deviceId, kind] = levels.slice(-2)
    if (levels.length !== this.prefix.split('/').length + 2 || !deviceId) return
    const body = parse(payload) as Record<string, unknown> | null
    if (kind === 'response') {
      const requestId = typeof body?.requestId === 'string' ? body.requestId : null
      const deliver = requestId ? this.answers.get(requestId) : undefined
      if (deliver && typeof body?.status === 'number' && body.envelope) deliver({ status: body.status, envelope: body.envelope as Envelope })
      return
    }
    if (kind !== 'registration' && kind !== 'status') return
    const device = this.devices.get(deviceId) ?? { deviceId, state: 'unknown', registration: null }
    // An empty retained message clears the topic (a device removed from the fleet).
    if (kind === 'registration') device.registration = body && typeof body.softwareVersion === 'string' ? { ...(body as unknown as Registration), http: (body.http as Registration['http']) ?? null } : null
    else device.state = body?.state === 'online' ? 'online' : body?.state === 'offline' ? 'offline' : 'unknown'
    if (device.registration === null && device.state === 'unknown') this.devices.delete(deviceId)
    else this.devices.set(deviceId, device)
    for (const watcher of this.watchers) watcher()
  }

  /** Every device with a registration or a status, by id. */
  list(): FleetDevice[] {
    return [...this.devices.values()].map((d) => ({ ...d })).sort((a, b) => a.deviceId.localeCompare(b.deviceId))
  }

  device(deviceId: string): FleetDevice | null {
    const device = this.devices.get(deviceId)
    return device ? { ...device } : null
  }

  /** Resolves with the device once `match` holds for it (checked now and on every change); null after `timeoutMs`. */
  waitFor(deviceId: string, match: (device: FleetDevice) => boolean, timeoutMs: number): Promise<FleetDevice | null> {
    return waitForMatch(this.watchers, () => this.device(deviceId), match, timeoutMs)
  }

  /**
   * Runs a route on a device through its request topic and resolves with its answer; null when
   * none came within `timeoutMs`. A refusal because the device was not yet registered again
   * (retryable) is retried until then.
   */
  async request(deviceId: string, path: string, body: unknown, timeoutMs: number): Promise<MqttAnswer | null> {
    const base = `${this.prefix}/${deviceId}`
    if (!this.responseTopics.has(base)) {
      await this.client.subscribeAsync(`${base}/response`, { qos: 1 })
      this.responseTopics.add(base)
    }
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const requestId = `cli-${uuid()}`
      const answer = await new Promise<MqttAnswer | null>((resolve) => {
        const timer = setTimeout(() => { this.answers.delete(requestId); resolve(null) }, Math.max(0, deadline - Date.now()))
        this.answers.set(requestId, (received) => { clearTimeout(timer); this.answers.delete(requestId); resolve(received) })
        this.client.publishAsync(`${base}/request`, JSON.stringify({ requestId, path, body }), { qos: 1 }).catch(() => { /* the deadline answers */ })
      })
      const retry = answer?.envelope.resMsg?.[0]?.messageKey === NOT_REGISTERED && Date.now() + RETRY_NOT_REGISTERED_MS < deadline
      if (!retry) return answer
      await new Promise((resolve) => setTimeout(resolve, RETRY_NOT_REGISTERED_MS))
    }
  }

  async close(): Promise<void> {
    await this.client.endAsync(true).catch(() => {})
  }
}
