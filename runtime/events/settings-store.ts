import { hostname } from 'node:os'
import { eq } from 'drizzle-orm'
import type { Config } from '../../shared/config.ts'
import type { Db } from '../db/client.ts'
import { systemSettings } from '../../shared/db/schema/index.ts'
import { invalidParam } from '../../shared/errors/index.ts'
import type { MqttSettings, WebhookSettings } from '../../shared/events/types.ts'
import { loadMqttTls } from './mqtt-tls.ts'

const MQTT_PROTOCOLS = ['mqtt:', 'mqtts:', 'tcp:', 'ssl:', 'ws:', 'wss:']
const HTTP_PROTOCOLS = ['http:', 'https:']
const TLS_FIELDS = ['caFile', 'certFile', 'keyFile'] as const

function checkUrl(field: string, value: string, protocols: string[]) {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw invalidParam(field, 'is not a URL')
  }
  if (!protocols.includes(url.protocol)) throw invalidParam(field, `protocol must be one of ${protocols.join(' ')}`)
}

/**
 * Channel settings: the configuration rows are the defaults; a row in `system_settings`
 * (written by the System endpoints) overrides them, so a setting survives restarts.
 */
export class ChannelSettingsStore {
  constructor(private readonly db: Db, private readonly config: Config, private readonly now: () => number) {}

  private async stored<T>(key: string): Promise<Partial<T>> {
    const [row] = await this.db.select().from(systemSettings).where(eq(systemSettings.key, key)).limit(1)
    return row ? JSON.parse(row.value) as Partial<T> : {}
  }

  private async save(key: string, value: unknown) {
    const values = { value: JSON.stringify(value), updatedAt: this.now() }
    await this.db.insert(systemSettings).values({ key, ...values }).onConflictDoUpdate({ target: systemSettings.key, set: values })
  }

  mqttDefaults(): MqttSettings {
    const c = this.config
    return {
      enabled: c.mqttUrl !== '',
      url: c.mqttUrl,
      clientId: c.mqttClientId || `cwai-${hostname().replace(/[^A-Za-z0-9_.-]/g, '-')}`,
      username: c.mqttUsername,
      password: c.mqttPassword,
      topicPrefix: c.mqttTopicPrefix,
      rejectUnauthorized: c.mqttRejectUnauthorized,
      caFile: c.mqttCaFile,
      certFile: c.mqttCertFile,
      keyFile: c.mqttKeyFile,
      haDiscovery: c.mqttHaDiscovery,
      haDiscoveryPrefix: c.mqttHaDiscoveryPrefix,
    }
  }

  webhookDefaults(): WebhookSettings {
    const c = this.config
    const urls = c.webhookUrls.split(',').map((u) => u.trim()).filter(Boolean)
    return {
      enabled: urls.length > 0,
      urls,
      secret: c.webhookSecret,
      timeoutMs: c.webhookTimeoutMs,
      maxAttempts: c.webhookMaxAttempts,
      backoffBaseMs: c.webhookBackoffBaseMs,
      backoffMaxMs: c.webhookBackoffMaxMs,
    }
  }

  async mqtt(): Promise<MqttSettings> {
    return { ...this.mqttDefaults(), ...(await this.stored<MqttSettings>('mqtt')) }
  }

  async webhook(): Promise<WebhookSettings> {
    return { ...this.webhookDefaults(), ...(await this.stored<WebhookSettings>('webhook')) }
  }

  /**
   * Validates the merged result, every field whether MQTT is enabled or not (field names as JSON
   * pointers); `commit` stores the patch. The
   * caller applies `settings` first and commits only what was applied.
   */
  async prepareMqtt(patch: Partial<MqttSettings>): Promise<{ settings: MqttSettings; commit(): Promise<void> }> {
    const next = { ...(await this.mqtt()), ...patch }
    if (next.url !== '') checkUrl('/url', next.url, MQTT_PROTOCOLS)
    if (next.enabled && next.url === '') throw invalidParam('/url', 'is required when MQTT is enabled')
    // MQTT 3.1.1 (3.1.2.9): a password without a user name is a protocol violation.
    if (next.password !== '' && next.username === '') throw invalidParam('/username', 'is required when a password is set')
    // The TLS files are checked whatever `enabled` says, so that enabling later cannot fail on
    // something accepted earlier; applying reads them again. Only a change that switches MQTT
    // off and names no file skips them: switching off always works (docs/events.md "Channel settings").
    const switchingOff = patch.enabled === false && TLS_FIELDS.every((field) => patch[field] === undefined)
    if (!switchingOff) loadMqttTls(next)
    const stored = { ...(await this.stored<MqttSettings>('mqtt')), ...patch }
    return { settings: next, commit: () => this.save('mqtt', stored) }
  }

  async prepareWebhook(patch: Partial<WebhookSettings>): Promise<{ settings: WebhookSettings; commit(): Promise<void> }> {
    const next = { ...(await this.webhook()), ...patch }
    next.urls.forEach((url, i) => checkUrl(`/urls/${i}`, url, HTTP_PROTOCOLS))
    if (next.enabled && next.urls.length === 0) throw invalidParam('/urls', 'at least one URL is required when the webhook is enabled')
    if (next.backoffMaxMs < next.backoffBaseMs) throw invalidParam('/backoffMaxMs', 'must not be smaller than backoffBaseMs')
    const stored = { ...(await this.stored<WebhookSettings>('webhook')), ...patch }
    return { settings: next, commit: () => this.save('webhook', stored) }
  }
}
