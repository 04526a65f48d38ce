import WebSocket from 'ws'

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
  const frames: any[] = []
  const waiters = new Set<() => void>()
  ws.on('message', (data) => {
    frames.push(JSON.parse(data.toString()))
    for (const waiter of waiters) waiter()
  })
  ws.on('error', () => {})
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })))
  return {
    ws,
    frames,
    closed,
    events: () => frames.filter((f) => f.type === 'event').map((f) => f.event),
    waitFor(match, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = frames.find(match)
          if (!found) return
          waiters.delete(check)
          clearTimeout(timer)
          resolve(found)
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`no matching frame within ${timeoutMs} ms; got ${JSON.stringify(frames).slice(0, 500)}`))
        }, timeoutMs)
        waiters.add(check)
        check()
      })
    },
  }
}
