import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import { createInterface } from 'node:readline'

/** Debian's python3 (python3-gi and GStreamer's RTSP server bindings live there, test/provision.mjs). */
const PYTHON = '/usr/bin/python3'
const SCRIPT = path.join(import.meta.dirname, 'rtsp-server.py')

export interface RtspServer {
  url: string
  process: ChildProcess
  stop(): Promise<void>
}

/**
 * Serves `file` (an H.264 mp4) in a loop at rtsp://127.0.0.1:<port><mount> with GStreamer's
 * RTSP server; with `credentials` ("user:password") clients must authenticate (else 401).
 */
export async function startRtspServer(file: string, port: number, mount = '/cam', credentials?: string): Promise<RtspServer> {
  const child = spawn(PYTHON, [SCRIPT, file, String(port), mount, ...(credentials ? [credentials] : [])], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr!.on('data', (chunk) => { stderr += chunk })
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`RTSP server did not start\n${stderr}`)), 15_000)
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line === 'ready') {
        clearTimeout(timer)
        resolve()
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`RTSP server exited with ${code}\n${stderr}`))
    })
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  return {
    url: `rtsp://127.0.0.1:${port}${mount}`,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}
