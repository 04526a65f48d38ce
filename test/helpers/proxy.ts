import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

/** What the proxy does with one request: pass it on, cut it mid-body, or hold it until released. */
export type ProxyAction = 'pass' | 'drop-mid-body' | 'hold'

export interface ProxyRequestInfo {
  method: string
  path: string
  /** 1-based count of requests to this path so far, this one included. */
  n: number
}

export interface Proxy {
  url: string
  /** Where requests go; may change (a restarted device listens on a new port). */
  target: string
  /** Decides per request; default pass. */
  rule: (info: ProxyRequestInfo) => ProxyAction
  /** Requests seen, in order. */
  seen: ProxyRequestInfo[]
  /** Resolves when a request is being held. */
  held(): Promise<ProxyRequestInfo>
  /** Breaks the connections of held requests (the client sees a network error). */
  releaseHeld(): void
  close(): Promise<void>
}

/**
 * Cuts a request off: the device sees an aborted body, the client a broken answer. The client
 * first gets the head of an answer whose body never arrives: a browser resends a request on
 * its own when a reused connection closes before any answer, which would hide the break from
 * the application; after a head it reports a network error instead.
 */
function breakMidAnswer(upstream: ReturnType<typeof httpRequest>, req: IncomingMessage, res: ServerResponse) {
  upstream.removeAllListeners('error').on('error', () => {})
  upstream.destroy()
  req.removeAllListeners('data')
  req.resume()
  res.writeHead(502, { 'content-type': 'text/plain', 'content-length': '1024', connection: 'close' })
  res.write('cut')
  // Wait for the head to reach the client before the reset that may discard unread bytes.
  setTimeout(() => req.socket.destroy(), 200)
}

/**
 * A small HTTP proxy between a client and the device that can break connections on purpose,
 * to test resumable uploads against the real runtime (spec 4.12).
 */
export async function startProxy(target: string): Promise<Proxy> {
  const counts = new Map<string, number>()
  const heldSockets: Socket[] = []
  let heldWaiters: ((info: ProxyRequestInfo) => void)[] = []
  const sockets = new Set<Socket>()

  const proxy: Proxy = {
    url: '',
    target,
    rule: () => 'pass',
    seen: [],
    held: () => new Promise((resolve) => heldWaiters.push(resolve)),
    releaseHeld() {
      for (const socket of heldSockets.splice(0)) socket.destroy()
    },
    close: () => new Promise((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    }),
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://proxy').pathname
    const n = (counts.get(path) ?? 0) + 1
    counts.set(path, n)
    const info = { method: req.method ?? 'GET', path, n }
    proxy.seen.push(info)
    const action = proxy.rule(info)
    if (action === 'hold') {
      heldSockets.push(req.socket)
      const waiters = heldWaiters
      heldWaiters = []
      for (const resolve of waiters) resolve(info)
      return
    }
    const upstream = httpRequest(proxy.target + req.url, { method: req.method, headers: { ...req.headers, host: new URL(proxy.target).host } }, (answer) => {
      if (res.headersSent) return answer.resume()
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    upstream.on('error', () => req.socket.destroy())
    if (action === 'drop-mid-body') {
      // Forward about half of the body, then cut both sides: the device sees an aborted request.
      const half = Math.max(1, Math.floor(Number(req.headers['content-length'] ?? 2) / 2))
      let forwarded = 0
      req.on('data', (chunk: Buffer) => {
        if (forwarded >= half) return
        const part = chunk.subarray(0, half - forwarded)
        forwarded += part.length
        upstream.write(part)
        if (forwarded >= half) setTimeout(() => breakMidAnswer(upstream, req, res), 50)
      })
      return
    }
    req.pipe(upstream)
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return proxy
}
