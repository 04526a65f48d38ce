import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createInbox } from './inbox.ts'

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
  const inbox = createInbox<Delivery>('delivery', (deliveries) => deliveries.map((d) => `${d.body?.kind}:${d.status}`).join(', '))
  const deliveries = inbox.items
  const receiver: Receiver = {
    url: '',
    deliveries,
    respond: () => 200,
    waitFor: (match, timeoutMs = 20_000) => inbox.waitFor(match, timeoutMs),
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
      res.writeHead(status).end()
      inbox.push({ headers: req.headers, raw, body, status })
    })
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  return receiver
}
