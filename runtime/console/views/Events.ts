import { html } from 'htm/preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'

interface DeviceEvent { id: number; kind: string; time: string; source: string; payload: Record<string, unknown> }

const MAX_SHOWN = 50
const RECONNECT_MS = 3000

/**
 * Live events from the device's WebSocket listener (spec 6, port from /console/device.json),
 * authenticated with the session's mtk; reconnects from the last seen event id.
 */
export function Events({ client }: { client: DeviceClient }) {
  const [events, setEvents] = useState<DeviceEvent[]>([])
  const [state, setState] = useState<'connecting' | 'open' | 'closed' | 'refused'>('connecting')
  const lastId = useRef<number | null>(null)

  useEffect(() => {
    let socket: WebSocket | null = null
    let timer: ReturnType<typeof setTimeout> | null = null
    let stopped = false
    const connect = async () => {
      try {
        const { wsPort } = await (await fetch('/console/device.json')).json() as { wsPort: number }
        const url = new URL(`ws://${location.hostname}:${wsPort}/`)
        url.searchParams.set('mtk', client.mtk ?? '')
        if (lastId.current !== null) url.searchParams.set('lastEventId', String(lastId.current))
        setState('connecting')
        socket = new WebSocket(url)
        socket.onopen = () => setState('open')
        socket.onmessage = (message) => {
          try {
            // Frames: {type:"ready", lastId} first, then {type:"event", event} per event.
            const frame = JSON.parse(String(message.data)) as { type?: string; event?: DeviceEvent; lastId?: number }
            if (frame.type === 'ready' && typeof frame.lastId === 'number' && lastId.current === null) lastId.current = frame.lastId
            const event = frame.type === 'event' ? frame.event : undefined
            if (!event?.kind) return
            if (typeof event.id === 'number') lastId.current = event.id
            setEvents((list) => [event, ...list].slice(0, MAX_SHOWN))
          } catch {
            // not an event frame
          }
        }
        socket.onclose = (close) => {
          // RFC 6455 1008: the listener refused the mtk; do not hammer it.
          setState(close.code === 1008 ? 'refused' : 'closed')
          if (!stopped && close.code !== 1008) timer = setTimeout(connect, RECONNECT_MS)
        }
      } catch {
        setState('closed')
        if (!stopped) timer = setTimeout(connect, RECONNECT_MS)
      }
    }
    connect()
    return () => { stopped = true; if (timer) clearTimeout(timer); socket?.close() }
  }, [])

  const stateText = { connecting: 'Connecting…', open: 'Live', closed: 'Disconnected; reconnecting…', refused: 'The event listener refused this session.' }[state]
  return html`<section class="panel events" aria-labelledby="events">
    <h2 id="events">Live events <span class=${`badge ${state}`} data-testid="events-state">${stateText}</span></h2>
    ${events.length === 0 ? html`<p class="hint">No events since this page opened.</p>` : html`<ol class="event-list" aria-live="polite">
      ${events.map((e) => html`<li><time>${new Date(e.time).toLocaleTimeString()}</time> <code>${e.kind}</code> <span class="hint">${e.source}</span>
        <div class="payload">${JSON.stringify(e.payload)}</div></li>`)}
    </ol>`}
  </section>`
}
