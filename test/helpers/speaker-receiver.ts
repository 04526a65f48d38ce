import { createHash, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  method: string
  url: string
  contentType: string | undefined
  authorization: string | undefined
  body: Buffer
}

export interface SpeakerReceiver {
  url: string
  received: Received[]
  /** What the speaker asks of a request: nothing, HTTP Basic, or an RFC 7616 MD5 Digest with qop=auth. */
  auth: { kind: 'none' } | { kind: 'basic' | 'digest'; username: string; password: string }
  /** Status answered to an authorized request (default 200). */
  status: number
  close(): Promise<void>
}

const md5 = (text: string) => createHash('md5').update(text).digest('hex')

/** Parameters of a `Digest a="b", c=d` header. */
const digestParams = (header: string) =>
  Object.fromEntries([...header.replace(/^Digest\s+/i, '').matchAll(/(\w+)=(?:"([^"]*)"|([^\s,]+))/g)].map((m) => [m[1]!, m[2] ?? m[3]!]))

/**
 * A network speaker on loopback that takes audio pushed over HTTP (the `http-push` protocol of
 * audio columns): it keeps every request's bytes and checks Basic or Digest credentials itself.
 */
export async function startSpeaker(): Promise<SpeakerReceiver> {
  const realm = 'test-speaker'
  const nonce = randomBytes(12).toString('hex')
  const authorized = (req: IncomingMessage): boolean => {
    const header = req.headers.authorization ?? ''
    if (speaker.auth.kind === 'none') return true
    const { username, password } = speaker.auth
    if (speaker.auth.kind === 'basic') return header === `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`
    if (!/^Digest /i.test(header)) return false
    const p = digestParams(header)
    const ha1 = md5(`${username}:${realm}:${password}`)
    const ha2 = md5(`${req.method}:${req.url}`)
    return p.username === username && p.nonce === nonce && p.uri === req.url && p.qop === 'auth' &&
      p.response === md5(`${ha1}:${nonce}:${p.nc}:${p.cnonce}:auth:${ha2}`)
  }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      speaker.received.push({ method: req.method!, url: req.url!, contentType: req.headers['content-type'], authorization: req.headers.authorization, body: Buffer.concat(chunks) })
      if (!authorized(req)) {
        const challenge = speaker.auth.kind === 'digest' ? `Digest realm="${realm}", nonce="${nonce}", qop="auth", opaque="xyz"` : `Basic realm="${realm}"`
        res.writeHead(401, { 'www-authenticate': challenge }).end()
        return
      }
      res.writeHead(speaker.status, { 'content-type': 'text/plain' }).end(req.method === 'HEAD' ? undefined : 'played')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const speaker: SpeakerReceiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: [],
    auth: { kind: 'none' },
    status: 200,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
  return speaker
}
