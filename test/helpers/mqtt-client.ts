import mqtt, { type MqttClient } from 'mqtt'
import { createInbox } from './inbox.ts'

export interface Received {
  topic: string
  body: any
  retain: boolean
}

export interface Recorder {
  client: MqttClient
  messages: Received[]
  /** Resolves with the first message (seen so far or later) that matches. */
  waitFor(match: (m: Received) => boolean, timeoutMs?: number): Promise<Received>
  close(): Promise<void>
}

/** A test MQTT client that records every message on `filter`. */
export async function recordTopics(url: string, filter: string, options: { clientId?: string; clean?: boolean } = {}): Promise<Recorder> {
  const client = await mqtt.connectAsync(url, { clientId: options.clientId ?? `test-${Math.random().toString(36).slice(2)}`, clean: options.clean ?? true, reconnectPeriod: 100 })
  const inbox = createInbox<Received>('MQTT message', (messages) => messages.map((m) => m.topic).join(', '))
  client.on('message', (topic, payload, packet) => {
    let body: unknown = payload.toString()
    try {
      body = JSON.parse(payload.toString())
    } catch {
      // keep text
    }
    inbox.push({ topic, body, retain: packet.retain })
  })
  await client.subscribeAsync(filter, { qos: 1 })
  return {
    client,
    messages: inbox.items,
    waitFor: (match, timeoutMs = 20_000) => inbox.waitFor(match, timeoutMs),
    close: () => client.endAsync(true),
  }
}
