import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import { createInterface } from 'node:readline'

/** Debian's python3 (python3-gi and GStreamer's RTSP server bindings live there, test/provision.mjs). */
const PYTHON = '/usr/bin/python3'
const SCRIPT = path.join(import.meta.dirname, 'rtsp-server.py')

/** One pipeline playing a mount's file: when it started it and when it started it over (Date.now()). */
export interface RtspMedia {
  mount: string
  id: number
  startedAt: number
  loops: number[]
}

export interface RtspServer {
  /** The first mount's URL. */
  url: string
  /** Every mount's URL, in the order given. */
  urls: string[]
  /** Every pipeline started so far, oldest first. */
  media: RtspMedia[]
  process: ChildProcess
  stop(): Promise<void>
}

export interface RtspMount {
  path: string
  /** The mount's own file (H.264 mp4); the server's by default. */
  file?: string
}

/**
 * Serves `file` (an H.264 mp4) in a loop at rtsp://127.0.0.1:<port><mount> with GStreamer's
 * RTSP server, one independent camera per mount; with `credentials` ("user:password")
 * clients must authenticate (else 401). `shared: false` gives every client a pipeline of its
 * own (rtsp-server.py says why).
 */
export async function startRtspServer(file: string, port: number, mount: string | RtspMount[] = '/cam', credentials?: string, options: { shared?: boolean } = {}): Promise<RtspServer> {
  const mounts = typeof mount === 'string' ? [{ path: mount }] : mount
  const specs = mounts.map((m) => m.file ? `${m.path}=${m.file}` : m.path).join(',')
  const args = [SCRIPT, ...(options.shared === false ? ['--unshared'] : []), file, String(port), specs, ...(credentials ? [credentials] : [])]
  const child = spawn(PYTHON, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  const media: RtspMedia[] = []
  let stderr = ''
  child.stderr!.on('data', (chunk) => { stderr += chunk })
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`RTSP server did not start\n${stderr}`)), 15_000)
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const [word, path, id] = line.split(' ')
      if (word === 'start') media.push({ mount: path!, id: Number(id), startedAt: Date.now(), loops: [] })
      if (word === 'loop') media.find((m) => m.id === Number(id))?.loops.push(Date.now())
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
  const urls = mounts.map((m) => `rtsp://127.0.0.1:${port}${m.path}`)
  return {
    url: urls[0]!,
    urls,
    media,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}
