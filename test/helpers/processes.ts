import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'

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

/**
 * What a stuck device is doing, for a failing test to print: each process of the tree under
 * `pid` with its state and the kernel function it waits in (proc(5): stat, wchan), and the last
 * lines of the device's own log files (`<dataDir>/logs`, written apart from its stdout).
 */
export function deviceDiagnosis(pid: number, dataDir: string, lines = 40): string {
  const out: string[] = []
  const parents = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
    } catch {
      // the process ended meanwhile
    }
  }
  const tree = [pid]
  for (let i = 0; i < tree.length; i++) for (const [child, parent] of parents) if (parent === tree[i]) tree.push(child)
  for (const member of tree) {
    try {
      const stat = readFileSync(`/proc/${member}/stat`, 'utf8')
      const command = readFileSync(`/proc/${member}/cmdline`, 'utf8').split('\0').join(' ').slice(0, 120)
      const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]
      out.push(`process ${member} (${state}, waits in ${readFileSync(`/proc/${member}/wchan`, 'utf8') || '-'}): ${command}`)
    } catch {
      out.push(`process ${member}: gone`)
    }
  }
  const logDir = path.join(dataDir, 'logs')
  const files = existsSync(logDir) ? readdirSync(logDir).filter((name) => name.endsWith('.log')).sort() : []
  const tail = files.flatMap((name) => readFileSync(path.join(logDir, name), 'utf8').trimEnd().split('\n')).slice(-lines)
  out.push(`the last ${tail.length} lines of its log files (${files.join(', ') || 'none'}):`, ...tail)
  return out.join('\n')
}
