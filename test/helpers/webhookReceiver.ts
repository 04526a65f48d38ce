import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Delivery {
  headers: Record<string, string | string[] | undefined>
  raw: string
  body: any
  status: number
}

export interface Receiver {
  url: string
  deliveries: Delivery[]
  /** Decides the answer of each delivery; default 200. */
  respond: (body: any, attemptOfThisEvent: number) => number
  waitFor(match: (d: Delivery) => boolean, timeoutMs?: number): Promise<Delivery>
  close(): Promise<void>
}

/** A local HTTP receiver for webhook deliveries. */
export async function startReceiver(port = 0): Promise<Receiver> {
  const deliveries: Delivery[] = []
  const waiters = new Set<() => void>()
  const receiver: Receiver = {
    url: '',
    deliveries,
    respond: () => 200,
    waitFor(match, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = deliveries.find(match)
          if (!found) return
          waiters.delete(check)
          clearTimeout(timer)
          resolve(found)
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`no matching delivery within ${timeoutMs} ms; got ${deliveries.map((d) => `${d.body?.kind}:${d.status}`).join(', ')}`))
        }, timeoutMs)
        waiters.add(check)
        check()
      })
    },
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
  const server: Server = createServer((req, res) => {
    let raw = ''
    req.setEncoding('utf8')
    req.on('data', (chunk) => { raw += chunk })
    req.on('end', () => {
      let body: any = null
      try {
        body = JSON.parse(raw)
      } catch {
        // recorded as null
      }
      const attempt = deliveries.filter((d) => d.body?.id === body?.id).length + 1
      const status = receiver.respond(body, attempt)
      deliveries.push({ headers: req.headers, raw, body, status })
      res.writeHead(status).end()
      for (const waiter of waiters) waiter()
    })
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  return receiver
}
