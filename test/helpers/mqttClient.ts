import mqtt, { type MqttClient } from 'mqtt'

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
  const messages: Received[] = []
  const waiters = new Set<() => void>()
  client.on('message', (topic, payload, packet) => {
    let body: unknown = payload.toString()
    try {
      body = JSON.parse(payload.toString())
    } catch {
      // keep text
    }
    messages.push({ topic, body, retain: packet.retain })
    for (const waiter of waiters) waiter()
  })
  await client.subscribeAsync(filter, { qos: 1 })
  return {
    client,
    messages,
    waitFor(match, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = messages.find(match)
          if (!found) return
          waiters.delete(check)
          clearTimeout(timer)
          resolve(found)
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`no matching MQTT message within ${timeoutMs} ms; got ${messages.map((m) => m.topic).join(', ')}`))
        }, timeoutMs)
        waiters.add(check)
        check()
      })
    },
    close: () => client.endAsync(true),
  }
}
