import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { isDeviceReadyMessage, isLegacyListeningLine } from './readiness.ts'

export interface RunResult { code: number | null; signal: NodeJS.Signals | null; listened: boolean; timedOut: boolean }

export interface RunOptions {
  entry: string
  /** After an install: kill the child when it is not ready within this many ms; null: no probation. */
  probationMs: number | null
  /**
   * On probation, what "ready" needs besides the readiness signal (the supervisor asks `Probe`
   * on the announced port); resolves false when the signal aborts.
   */
  confirm?: (port: number, signal: AbortSignal) => Promise<boolean>
  env: NodeJS.ProcessEnv
  /** Receives the child right after it is spawned (signal forwarding). */
  onSpawn?: (child: ChildProcess) => void
  /** The child became ready (on probation: and confirmed). */
  onReady?: () => void
  /** Each stdout line of the child (the supervisor passes them on). */
  onLine?: (line: string) => void
}

const portOfLine = (line: string): number | null => {
  try {
    const port = JSON.parse(line).port
    return Number.isInteger(port) ? port : null
  } catch {
    return null
  }
}

/** Runs one device process until it exits; `listened` says whether it became ready. */
export function runChild(options: RunOptions): Promise<RunResult> {
  return new Promise((resolve) => {
    let listened = false
    let timedOut = false
    let confirming = false
    const probation = new AbortController()
    const child = spawn(process.execPath, [options.entry], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'], env: options.env })
    options.onSpawn?.(child)
    const timer = options.probationMs === null ? null : setTimeout(() => {
      if (listened) return
      timedOut = true
      probation.abort()
      child.kill('SIGKILL')
    }, options.probationMs)
    const ready = () => {
      if (listened) return
      listened = true
      if (timer) clearTimeout(timer)
      options.onReady?.()
    }
    const signalled = (port: number | null) => {
      if (listened || confirming) return
      if (options.probationMs === null || !options.confirm) return ready()
      if (port === null) return
      confirming = true
      void options.confirm(port, probation.signal).then((answered) => { if (answered) ready() })
    }
    child.on('message', (message) => { if (isDeviceReadyMessage(message)) signalled(message.port) })
    createInterface({ input: child.stdout! }).on('line', (line) => {
      options.onLine?.(line)
      if (isLegacyListeningLine(line)) signalled(portOfLine(line))
    })
    child.once('exit', (code, signal) => {
      if (timer) clearTimeout(timer)
      probation.abort()
      resolve({ code, signal, listened, timedOut })
    })
  })
}
