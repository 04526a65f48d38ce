import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'

/**
 * How the network area reaches the operating system: programs and files. With a namespace
 * every program runs through `ip netns exec <ns>` (which also mounts that namespace's
 * /sys and /etc/netns/<ns>/resolv.conf), so tests can point the whole area at a veth pair
 * inside a namespace and never touch the host's network.
 */
export interface HostAccess {
  /** Runs a program; rejects with a `HostCommandError` on a non-zero exit or the timeout. */
  run(program: string, args: string[], timeoutMs?: number): Promise<string>
  /** A file's text, or null when it cannot be read. */
  readText(file: string): Promise<string | null>
}

export class HostCommandError extends Error {
  constructor(readonly command: string, readonly stderr: string, readonly code: number | string | null) {
    super(`${command}: ${stderr.trim() || `exit ${code}`}`)
    this.name = 'HostCommandError'
  }
}

const DEFAULT_TIMEOUT_MS = 10_000

export function hostAccess(namespace = ''): HostAccess {
  const run = (program: string, args: string[], timeoutMs = DEFAULT_TIMEOUT_MS) => {
    const [file, argv] = namespace ? ['ip', ['netns', 'exec', namespace, program, ...args]] : [program, args]
    return new Promise<string>((resolve, reject) => {
      execFile(file, argv, { timeout: timeoutMs, maxBuffer: 8 * 1024 * 1024, encoding: 'utf8' }, (error, stdout, stderr) => {
        if (error) reject(new HostCommandError([program, ...args].join(' '), stderr || error.message, (error as { code?: number | string }).code ?? null))
        else resolve(stdout)
      })
    })
  }
  return {
    run,
    async readText(file) {
      try {
        return namespace ? await run('cat', [file]) : await readFile(file, 'utf8')
      } catch {
        return null
      }
    },
  }
}
