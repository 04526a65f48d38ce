import { existsSync, readdirSync, readFileSync } from 'node:fs'

/** Processes named `name` whose parent is `pid` (e.g. the device's ffmpeg readers), from /proc. */
export function childProcesses(pid: number, name: string): number[] {
  const children: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (comm === name && ppid === pid) children.push(Number(entry))
    } catch {
      // the process ended meanwhile
    }
  }
  return children
}

export const isAlive = (pid: number) => existsSync(`/proc/${pid}`)

/** Polls `probe` every 200 ms until it returns a truthy value, which is returned. */
export async function until<T>(probe: () => Promise<T | undefined | null | false>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}
