import { readdir, readFile, readlink } from 'node:fs/promises'

const hexPort = (port: number) => port.toString(16).toUpperCase().padStart(4, '0')
/** 127.0.0.1 as /proc/net/tcp writes it (little-endian hex). */
const LOOPBACK = '0100007F'

/**
 * Whether the loopback TCP connection from `clientPort` to `serverPort` is a socket the
 * process `pid` holds: its inode is read from /proc/net/tcp and looked for among the
 * process's open files (Linux; readable for processes of the same user, e.g. our children).
 */
export async function socketOwnedBy(pid: number, clientPort: number, serverPort: number): Promise<boolean> {
  const table = await readFile('/proc/net/tcp', 'utf8').catch(() => '')
  const local = `${LOOPBACK}:${hexPort(clientPort)}`
  const remote = `${LOOPBACK}:${hexPort(serverPort)}`
  // Columns: sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
  const row = table.split('\n').map((line) => line.trim().split(/\s+/)).find((cols) => cols[1] === local && cols[2] === remote)
  const inode = row?.[9]
  if (!inode || inode === '0') return false
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])
  for (const fd of fds) if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')) === `socket:[${inode}]`) return true
  return false
}
