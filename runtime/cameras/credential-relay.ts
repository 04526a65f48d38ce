import { randomBytes } from 'node:crypto'
import net from 'node:net'
import { socketOwnedBy } from './socket-owner.ts'

/** One source URL offered to one ffmpeg child. */
export interface RelayTicket {
  /** What ffmpeg is given instead of the source URL: rtsp:// or http:// on loopback, no credentials. */
  url: string
  /** The process that may use it (set right after spawn, before it can connect). */
  bind(pid: number): void
  /** The child has exited: the ticket is void. */
  close(): void
}

/** A request line and its headers: at most this many bytes (ffmpeg sends ~150). */
const MAX_REQUEST_BYTES = 8192
const REQUEST_TIMEOUT_MS = 5000

/**
 * Hands ffmpeg a source URL with credentials without putting them in its argv, which any
 * local user can read in /proc/<pid>/cmdline. ffmpeg gets `rtsp://127.0.0.1:<port>/<ticket>`
 * (or `http://` for an MJPEG source) and this loopback server answers its request with a
 * redirect — RTSP `302` or HTTP `302` — whose `Location` is the source URL with the
 * credentials; ffmpeg follows it, keeping its options (`-rtsp_transport tcp`, timeouts). The
 * ticket is a random name valid while its child runs, and the answer goes only to a
 * connection whose socket the bound child holds (socket-owner.ts), so reading the ticket from
 * the child's command line gives nothing. (The concat demuxer from stdin would also keep the
 * URL out of argv, but the bundled ffmpeg 4.1 cannot pass it `rtsp_transport` options.)
 */
export class CredentialRelay {
  private server: net.Server | null = null
  private listening: Promise<number> | null = null
  private readonly tickets = new Map<string, { url: string; pid: number | null }>()

  async ticket(url: string): Promise<RelayTicket> {
    if (/[\r\n]/.test(url)) throw new Error('a source URL cannot hold line breaks')
    const port = await this.listen()
    const id = randomBytes(18).toString('base64url')
    const entry = { url, pid: null as number | null }
    this.tickets.set(id, entry)
    const scheme = /^rtsps?:/i.test(url) ? 'rtsp' : 'http'
    return {
      url: `${scheme}://127.0.0.1:${port}/${id}`,
      bind: (pid) => { entry.pid = pid },
      close: () => { this.tickets.delete(id) },
    }
  }

  private listen(): Promise<number> {
    this.listening ??= new Promise((resolve, reject) => {
      const server = net.createServer((socket) => this.answer(socket))
      this.server = server
      server.once('error', reject)
      server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port))
    })
    return this.listening
  }

  private answer(socket: net.Socket): void {
    socket.setTimeout(REQUEST_TIMEOUT_MS, () => socket.destroy())
    socket.on('error', () => socket.destroy())
    let request = ''
    const onData = (chunk: Buffer) => {
      request += chunk.toString('latin1')
      if (request.length > MAX_REQUEST_BYTES) return socket.destroy()
      if (!request.includes('\r\n\r\n')) return
      socket.off('data', onData)
      void this.reply(socket, request)
    }
    socket.on('data', onData)
  }

  private async reply(socket: net.Socket, request: string): Promise<void> {
    const [, target = '', protocol = ''] = request.slice(0, request.indexOf('\r\n')).split(' ')
    const rtsp = protocol.startsWith('RTSP/')
    const cseq = /^CSeq:\s*(\d+)/im.exec(request)?.[1]
    const entry = this.tickets.get(target.split('/').pop() ?? '')
    const owned = entry?.pid != null && socket.remotePort !== undefined &&
      await socketOwnedBy(entry.pid, socket.remotePort, (this.server!.address() as net.AddressInfo).port)
    const head = rtsp ? `RTSP/1.0 ${owned ? '302 Moved Temporarily' : '403 Forbidden'}\r\n${cseq ? `CSeq: ${cseq}\r\n` : ''}`
      : `HTTP/1.1 ${owned ? '302 Found' : '403 Forbidden'}\r\nContent-Length: 0\r\nConnection: close\r\n`
    socket.end(`${head}${owned ? `Location: ${entry!.url}\r\n` : ''}\r\n`)
  }

  /** Stops listening (device stop); children still running keep the sockets they have. */
  async close(): Promise<void> {
    this.tickets.clear()
    const server = this.server
    this.server = null
    this.listening = null
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
