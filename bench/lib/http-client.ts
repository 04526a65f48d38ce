import { randomUUID } from 'node:crypto'
import http from 'node:http'

/**
 * A lean HTTP client for benchmarks whose load generator shares the device's 2 cores:
 * node:http with keep-alive, bodies built once as Buffers. `fetch` with `FormData` costs the
 * client ~8 ms of CPU per 144 KB multipart upload on this machine (node:http: ~2 ms), CPU the
 * device under test would otherwise lose to its own load generator.
 */
export class BenchClient {
  readonly #url: URL
  readonly #agent = new http.Agent({ keepAlive: true, maxSockets: 16 })
  readonly #headers: Record<string, string>

  constructor(baseUrl: string, headers: Record<string, string> = {}) {
    this.#url = new URL(baseUrl)
    this.#headers = headers
  }

  /** POSTs a body and returns the HTTP status and the parsed JSON answer. */
  request(route: string, body: Buffer, headers: Record<string, string>): Promise<{ status: number; body: any }> {
    return new Promise((resolve, reject) => {
      const req = http.request({
        host: this.#url.hostname, port: this.#url.port, path: route, method: 'POST', agent: this.#agent,
        headers: { ...this.#headers, ...headers, 'content-length': String(body.length) },
      }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('error', reject)
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) })
          } catch (error) {
            reject(error)
          }
        })
      })
      req.on('error', reject)
      req.end(body)
    })
  }

  postJson(route: string, value: unknown) {
    return this.request(route, Buffer.from(JSON.stringify(value)), { 'content-type': 'application/json' })
  }

  /** multipart/form-data with text fields first, then one file part named `file`. */
  postMultipart(route: string, fields: Record<string, string | number>, file: { name: string; bytes: Buffer }) {
    const boundary = `----bench-${randomUUID()}`
    const head = Object.entries(fields)
      .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('') +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`
    const body = Buffer.concat([Buffer.from(head), file.bytes, Buffer.from(`\r\n--${boundary}--\r\n`)])
    return this.request(route, body, { 'content-type': `multipart/form-data; boundary=${boundary}` })
  }

  close(): void {
    this.#agent.destroy()
  }
}
