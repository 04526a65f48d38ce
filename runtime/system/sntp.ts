import { createSocket } from 'node:dgram'
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'

/** Seconds from the NTP era (1900) to the Unix epoch. */
const NTP_EPOCH_OFFSET = 2_208_988_800

const readTimestamp = (buffer: Buffer, at: number) =>
  (buffer.readUInt32BE(at) - NTP_EPOCH_OFFSET) * 1000 + (buffer.readUInt32BE(at + 4) / 2 ** 32) * 1000

export function writeTimestamp(buffer: Buffer, at: number, ms: number) {
  const seconds = Math.floor(ms / 1000)
  buffer.writeUInt32BE(seconds + NTP_EPOCH_OFFSET, at)
  buffer.writeUInt32BE(Math.floor(((ms - seconds * 1000) / 1000) * 2 ** 32), at + 4)
}

/**
 * One SNTP exchange (RFC 4330): client mode 3, version 4. The offset is
 * ((T2 - T1) + (T3 - T4)) / 2 and the delay (T4 - T1) - (T3 - T2); T1/T4 are read from the
 * device's wall clock, so the offset is how far that clock is from the server's.
 */
export async function sntpQuery(host: string, options: { port?: number; timeoutMs: number; now?: () => number }): Promise<{ offsetMs: number; delayMs: number; stratum: number }> {
  const now = options.now ?? Date.now
  const address = isIP(host) ? host : (await lookup(host)).address
  const socket = createSocket(isIP(address) === 6 ? 'udp6' : 'udp4')
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs)
      const request = Buffer.alloc(48)
      request[0] = (4 << 3) | 3
      let t1 = 0
      socket.once('error', (error: NodeJS.ErrnoException) => { clearTimeout(timer); reject(new Error(error.code ?? error.message)) })
      socket.on('message', (reply) => {
        const t4 = now()
        // Only a server-mode answer to this request (its originate timestamp echoes ours).
        if (reply.length < 48 || (reply[0]! & 7) !== 4 || reply.readUInt32BE(24) !== request.readUInt32BE(40) || reply.readUInt32BE(28) !== request.readUInt32BE(44)) return
        clearTimeout(timer)
        const stratum = reply[1]!
        if (stratum === 0) return reject(new Error('kiss-o\'-death (stratum 0)'))
        const t2 = readTimestamp(reply, 32), t3 = readTimestamp(reply, 40)
        resolve({ offsetMs: Math.round(((t2 - t1) + (t3 - t4)) / 2), delayMs: Math.max(0, Math.round((t4 - t1) - (t3 - t2))), stratum })
      })
      t1 = now()
      writeTimestamp(request, 40, t1)
      socket.send(request, options.port ?? 123, address)
    })
  } finally {
    socket.close()
  }
}
