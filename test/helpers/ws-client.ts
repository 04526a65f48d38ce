import WebSocket from 'ws'
import { createInbox } from './inbox.ts'

export interface WsRecorder {
  ws: WebSocket
  frames: any[]
  closed: Promise<{ code: number; reason: string }>
  waitFor(match: (frame: any) => boolean, timeoutMs?: number): Promise<any>
  events(): any[]
}

/** Connects to the event WebSocket and records every frame. */
export function connectEvents(port: number, options: { mtk?: string; query?: Record<string, string>; headers?: Record<string, string> } = {}): WsRecorder {
  const url = new URL(`ws://127.0.0.1:${port}/`)
  for (const [k, v] of Object.entries(options.query ?? {})) url.searchParams.set(k, v)
  const ws = new WebSocket(url, { headers: { ...(options.mtk ? { mtk: options.mtk } : {}), ...options.headers } })
  const inbox = createInbox<any>('frame', (frames) => JSON.stringify(frames).slice(0, 500))
  const frames = inbox.items
  ws.on('message', (data) => {
    inbox.push(JSON.parse(data.toString()))
  })
  ws.on('error', () => {})
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })))
  return {
    ws,
    frames,
    closed,
    events: () => frames.filter((f) => f.type === 'event').map((f) => f.event),
    waitFor: (match, timeoutMs = 15_000) => inbox.waitFor(match, timeoutMs),
  }
}
