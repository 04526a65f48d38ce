// Worker thread of bench/events.bench.mjs: one receiving client (WebSocket or MQTT) that
// records the arrival time of each event by sequence number. Plain JS: worker threads do
// not inherit the tsx loader.
import { parentPort } from 'node:worker_threads'
import mqtt from 'mqtt'
import WebSocket from 'ws'

const now = () => performance.timeOrigin + performance.now()

/** `mqtt`/`websocket` messages add the client; `count` and `collect` report what it saw. */
{
  const seen = {}
  // Negative sequence numbers are warm-up events (not measured).
  const record = (name, seq) => seq >= 0 && (seen[name] ??= new Map()).set(seq, now())
  parentPort.on('message', async (message) => {
    if (message.type === 'mqtt') {
      const client = await mqtt.connectAsync(message.url, { clientId: message.clientId })
      client.on('message', (_topic, payload) => {
        const body = JSON.parse(payload)
        record(message.name, body.seq ?? body.payload.in)
      })
      await client.subscribeAsync(message.topic, { qos: 1 })
      parentPort.postMessage({ type: 'ready', name: message.name })
    } else if (message.type === 'websocket') {
      const ws = new WebSocket(message.url, { headers: { mtk: message.mtk } })
      ws.on('message', (data) => {
        const frame = JSON.parse(data)
        if (frame.type === 'ready') parentPort.postMessage({ type: 'ready', name: message.name })
        else record(message.name, frame.event.payload.in)
      })
    } else if (message.type === 'count') {
      parentPort.postMessage({ type: 'count', counts: Object.fromEntries(Object.entries(seen).map(([k, v]) => [k, v.size])) })
    } else if (message.type === 'collect') {
      parentPort.postMessage({ type: 'collect', seen: Object.fromEntries(Object.entries(seen).map(([k, v]) => [k, [...v]])) })
    }
  })
}
