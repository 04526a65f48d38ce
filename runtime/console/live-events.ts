import { useEffect, useRef, useState } from 'preact/hooks'
import type { DeviceClient } from '../client/client.ts'
import type { DeviceEvent } from '../client/types.ts'

export type LiveState = 'connecting' | 'open' | 'closed' | 'refused'

const RECONNECT_MS = 3000

export interface LiveOptions {
  /** Only these kinds (the listener's `kinds` filter). */
  kinds?: string[]
  onEvent(event: DeviceEvent): void
  /** The listener is ready; `lastId` is the newest event id it holds (events after it arrive live). */
  onReady?(lastId: number): void
}

/**
 * Live events from the device's WebSocket listener (spec 6, docs/events.md "WebSocket"; port from
 * /console/device.json), authenticated with the session's mtk. A dropped connection reconnects
 * from the last event seen, so nothing produced meanwhile is missed.
 */
export function useLiveEvents(client: DeviceClient, options: LiveOptions): LiveState {
  const [state, setState] = useState<LiveState>('connecting')
  // The latest callbacks, without reconnecting when the caller renders again.
  const latest = useRef(options)
  latest.current = options
  const kinds = options.kinds?.join(',') ?? ''

  useEffect(() => {
    let socket: WebSocket | null = null
    let timer: ReturnType<typeof setTimeout> | null = null
    let stopped = false
    let lastId: number | null = null
    const retry = () => { if (!stopped) timer = setTimeout(connect, RECONNECT_MS) }
    const connect = async () => {
      try {
        const { wsPort } = await (await fetch('/console/device.json')).json() as { wsPort: number }
        if (stopped) return
        const url = new URL(`ws://${location.hostname}:${wsPort}/`)
        url.searchParams.set('mtk', client.mtk ?? '')
        if (kinds) url.searchParams.set('kinds', kinds)
        if (lastId !== null) url.searchParams.set('lastEventId', String(lastId))
        setState('connecting')
        socket = new WebSocket(url)
        socket.onopen = () => setState('open')
        socket.onmessage = (message) => {
          try {
            // Frames: {type:"ready", lastId} first, then {type:"event", event} per event.
            const frame = JSON.parse(String(message.data)) as { type?: string; event?: DeviceEvent; lastId?: number }
            if (frame.type === 'ready' && typeof frame.lastId === 'number' && lastId === null) {
              lastId = frame.lastId
              latest.current.onReady?.(frame.lastId)
            }
            const event = frame.type === 'event' ? frame.event : undefined
            if (!event?.kind) return
            if (typeof event.id === 'number') lastId = event.id
            latest.current.onEvent(event)
          } catch {
            // not an event frame
          }
        }
        socket.onclose = (close) => {
          // RFC 6455 1008: the listener refused the mtk; do not hammer it.
          setState(close.code === 1008 ? 'refused' : 'closed')
          if (close.code !== 1008) retry()
        }
      } catch {
        setState('closed')
        retry()
      }
    }
    connect()
    return () => { stopped = true; if (timer) clearTimeout(timer); socket?.close() }
  }, [kinds])
  return state
}

/** The state in words, for a badge next to a live list. */
export const LIVE_TEXT: Record<LiveState, string> = { connecting: 'Connecting…', open: 'Live', closed: 'Disconnected; reconnecting…', refused: 'The event listener refused this session.' }
