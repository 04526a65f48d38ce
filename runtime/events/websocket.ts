import type { IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { WebSocketServer, type WebSocket } from 'ws'
import { isEventKind } from '../../shared/events/kinds.ts'
import type { Services } from '../../shared/handler.ts'
import type { DeviceEvent } from '../../shared/events/types.ts'
import { eventJson, type Outbox } from './outbox.ts'
import { Tail } from './tail.ts'
import type { DeliveryRecorder } from '../metrics/index.ts'
import { monotonicNow } from '../../shared/clock.ts'

// RFC 6455 7.4.1: 1008 = policy violation (no valid mtk, bad parameters).
export const POLICY_VIOLATION = 1008
// RFC 6455 7.4.1 / IANA registry: 1013 = try again later (as many clients as allowed).
export const TRY_AGAIN_LATER = 1013
// How long a client over the buffer limit has to read before it is disconnected.
const SLOW_CLIENT_GRACE_MS = 5000

/** Waits until the unsent bytes fall to half the limit; false when they did not in time. */
async function drained(ws: WebSocket, limit: number, graceMs: number): Promise<boolean> {
  const deadline = monotonicNow() + graceMs
  while (ws.readyState === ws.OPEN && ws.bufferedAmount > limit / 2) {
    if (monotonicNow() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return ws.readyState === ws.OPEN
}

export interface WebSocketDeps {
  host: string
  port: number
  outbox: Outbox
  services: () => Services
  maxBufferedBytes: number
  /** Clients served at once; one more is closed with 1013 (each client polls the outbox). */
  maxClients: number
  pollMs: number
  /** Events sent, and events a client lost by going away or being disconnected (docs/metrics.md "Metrics"). */
  record: DeliveryRecorder
}

/**
 * The event WebSocket listener (spec 6: 0.0.0.0, default port 9000).
 *
 * Connect with `mtk` as header or query parameter; optional query `kinds=a,b` (filter) and
 * `lastEventId=<id>` (or header `last-event-id`) to resume after the last event seen.
 * Frames: first `{type:"ready", lastId, oldestId}`, then `{type:"event", event}` per event.
 * A client that does not read is disconnected once its unsent bytes exceed the limit; past
 * `maxClients` clients, a new one is closed with 1013 (try again later).
 */
export class EventWebSocketServer {
  private server: WebSocketServer | null = null
  private readonly tails = new Map<WebSocket, Tail>()
  /** Clients past the checks, counted from then on (their tail starts after an await). */
  private readonly admitted = new Set<WebSocket>()
  private heartbeat: NodeJS.Timeout | null = null
  port = 0

  constructor(private readonly deps: WebSocketDeps) {}

  get clients(): number {
    return this.tails.size
  }

  /** Events after each client's position up to `lastId`, summed over clients. */
  backlog(lastId: number): number {
    let behind = 0
    for (const tail of this.tails.values()) behind += Math.max(0, lastId - tail.cursor)
    return behind
  }

  async start(): Promise<void> {
    const server = new WebSocketServer({ host: this.deps.host, port: this.deps.port, maxPayload: 64 * 1024 })
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve)
      server.once('error', reject)
    })
    this.server = server
    this.port = (server.address() as AddressInfo).port
    server.on('connection', (ws, request) => void this.accept(ws, request))
    const alive = new WeakSet<WebSocket>()
    this.heartbeat = setInterval(() => {
      for (const ws of server.clients) {
        if (!alive.has(ws)) {
          ws.terminate()
          continue
        }
        alive.delete(ws)
        ws.ping()
      }
    }, 30_000)
    this.heartbeat.unref()
    server.on('connection', (ws) => {
      alive.add(ws)
      ws.on('pong', () => alive.add(ws))
    })
  }

  private async accept(ws: WebSocket, request: IncomingMessage): Promise<void> {
    const services = this.deps.services()
    const url = new URL(request.url ?? '/', 'ws://device')
    const header = (name: string) => {
      const value = request.headers[name]
      return Array.isArray(value) ? value[0] : value
    }
    ws.on('error', () => {})
    const mtk = header('mtk') ?? url.searchParams.get('mtk')
    const identity = await services.sessions.resolve(mtk).catch(() => null)
    // Same rule as HTTP (spec 5.2, 5.7): a valid mtk of an account with no pending password change.
    if (!identity) return ws.close(POLICY_VIOLATION, 'a valid mtk is required')
    if (identity.passwordChangeRequired) return ws.close(POLICY_VIOLATION, 'password change required')

    const kinds = (url.searchParams.get('kinds') ?? '').split(',').map((k) => k.trim()).filter(Boolean)
    const unknown = kinds.filter((k) => !isEventKind(k))
    if (unknown.length > 0) return ws.close(POLICY_VIOLATION, `unknown kinds: ${unknown.join(',').slice(0, 80)}`)
    const resume = url.searchParams.get('lastEventId') ?? header('last-event-id') ?? null
    if (resume !== null && !/^\d{1,15}$/.test(resume)) return ws.close(POLICY_VIOLATION, 'lastEventId must be an event id')
    if (ws.readyState !== ws.OPEN) return
    if (this.admitted.size >= this.deps.maxClients) return ws.close(TRY_AGAIN_LATER, `as many event clients as allowed (${this.deps.maxClients}) are connected`)
    this.admitted.add(ws)
    ws.on('close', () => this.admitted.delete(ws))

    const { outbox } = this.deps
    const from = resume === null ? outbox.lastId : Number(resume)
    const oldestId = await outbox.oldestId()
    if (ws.readyState !== ws.OPEN) return
    ws.send(JSON.stringify({ type: 'ready', lastId: outbox.lastId, oldestId, resumedFrom: from, kinds }))
    const tail = new Tail({
      name: 'websocket',
      outbox,
      from,
      kinds: kinds.length ? kinds : null,
      batch: 500,
      pollMs: this.deps.pollMs,
      log: services.log,
      deliver: (events) => this.sendAll(ws, events, identity.accountName, services),
    })
    this.tails.set(ws, tail)
    ws.on('close', () => {
      this.tails.delete(ws)
      void tail.stop()
    })
    tail.start()
  }

  /**
   * Sends a batch with one socket write per run of frames (corked). Backpressure: past the
   * limit, the client gets a moment to read; one that does not is disconnected, never
   * buffered without bound.
   */
  private async sendAll(ws: WebSocket, events: DeviceEvent[], account: string, services: Services) {
    const socket = (ws as unknown as { _socket?: { cork(): void; uncork(): void } })._socket
    let i = 0
    // A client gone or disconnected loses what is left: it resumes with lastEventId, if at all.
    const lost = (reason: string) => {
      this.deps.record('failed', events.length - i)
      return new Error(reason)
    }
    while (i < events.length) {
      if (ws.readyState !== ws.OPEN) throw lost('closed')
      if (ws.bufferedAmount > this.deps.maxBufferedBytes && !(await drained(ws, this.deps.maxBufferedBytes, SLOW_CLIENT_GRACE_MS))) {
        services.log.warn({ bufferedBytes: ws.bufferedAmount, account }, 'event websocket client does not read; disconnecting')
        ws.terminate()
        throw lost('slow client')
      }
      const from = i
      socket?.cork()
      try {
        for (; i < events.length && ws.bufferedAmount <= this.deps.maxBufferedBytes; i++) ws.send(`{"type":"event","event":${eventJson(events[i]!)}}`)
      } finally {
        socket?.uncork()
        this.deps.record('delivered', i - from)
      }
    }
  }

  async stop(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat)
    await Promise.all([...this.tails.values()].map((tail) => tail.stop()))
    const server = this.server
    if (!server) return
    for (const ws of server.clients) ws.close(1001, 'device stopping')
    await new Promise<void>((resolve) => server.close(() => resolve()))
    for (const ws of server.clients) ws.terminate()
  }
}
