import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'

export interface Child {
  process: ChildProcess
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
  stop(graceMs?: number): Promise<void>
}

/** Spawns a child process that is stopped by its own handle (never by name). */
export function spawnChild(command: string, args: string[], options: SpawnOptions): Child {
  const child = spawn(command, args, options)
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null) resolve()
    else child.once('exit', () => resolve())
  })
  return {
    process: child,
    async stop(graceMs = 5_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
      await exited
      clearTimeout(timer)
    },
  }
}

/** Resolves with the first stdout line that parses as JSON and satisfies `accept`. */
export function firstJsonLine<T>(child: ChildProcess, accept: (value: any) => value is T, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    let buffered = ''
    let stderr = ''
    child.stderr?.on('data', (chunk: Buffer) => { stderr += chunk })
    const timer = setTimeout(() => reject(new Error(`no ready line within ${timeoutMs} ms\n${stderr}`)), timeoutMs)
    const onData = (chunk: Buffer) => {
      buffered += chunk
      let newline: number
      while ((newline = buffered.indexOf('\n')) !== -1) {
        const line = buffered.slice(0, newline)
        buffered = buffered.slice(newline + 1)
        try {
          const value: unknown = JSON.parse(line)
          if (accept(value)) {
            clearTimeout(timer)
            child.stdout?.off('data', onData)
            child.stdout?.resume() // keep draining so the child never blocks on a full pipe
            resolve(value)
            return
          }
        } catch { /* not JSON */ }
      }
    }
    child.stdout?.on('data', onData)
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`exited with ${code} before ready\n${stderr}`)) })
  })
}
