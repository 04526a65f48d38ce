import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { isDeviceReadyMessage, isLegacyListeningLine } from './readiness.ts'

export interface RunResult { code: number | null; listened: boolean; timedOut: boolean }

export interface RunOptions {
  entry: string
  /** After an install: kill the child when it is not ready within this many ms; null: no probation. */
  probationMs: number | null
  env: NodeJS.ProcessEnv
  /** Receives the child right after it is spawned (signal forwarding). */
  onSpawn?: (child: ChildProcess) => void
  /** Each stdout line of the child (the supervisor passes them on). */
  onLine?: (line: string) => void
}

/** Runs one device process until it exits; `listened` says whether it became ready. */
export function runChild(options: RunOptions): Promise<RunResult> {
  return new Promise((resolve) => {
    let listened = false
    let timedOut = false
    const child = spawn(process.execPath, [options.entry], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'], env: options.env })
    options.onSpawn?.(child)
    const timer = options.probationMs === null ? null : setTimeout(() => {
      if (listened) return
      timedOut = true
      child.kill('SIGKILL')
    }, options.probationMs)
    const ready = () => {
      if (listened) return
      listened = true
      if (timer) clearTimeout(timer)
    }
    child.on('message', (message) => { if (isDeviceReadyMessage(message)) ready() })
    createInterface({ input: child.stdout! }).on('line', (line) => {
      options.onLine?.(line)
      if (isLegacyListeningLine(line)) ready()
    })
    child.once('exit', (code) => {
      if (timer) clearTimeout(timer)
      resolve({ code, listened, timedOut })
    })
  })
}
