import type { MqttClient } from 'mqtt'

/** What the MQTT channel offers a companion publisher on its connection (runtime/events/mqtt.ts). */
export interface MqttCompanion {
  /** Topic filters the channel subscribes to for it after each connect. */
  subscriptions(): string[]
  /** The channel is registered on `client` (a connect or a reconnect). */
  registered(client: MqttClient): void
  /** A message on one of its subscriptions. */
  message(topic: string, payload: Buffer): void
  start(): void
  stop(): Promise<void>
}
