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
  /** The server's current process (started again when it aborts by itself). */
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
  const media: RtspMedia[] = []
  let stopped = false
  let stderr = ''

  /** One run of the server; resolves once it listens. */
  const launch = () => {
    const child = spawn(PYTHON, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    child.stderr!.on('data', (chunk) => { stderr = (stderr + chunk).slice(-16_384) })
    const ready = new Promise<void>((resolve, reject) => {
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
    // GStreamer 1.22's RTSP server can abort (gst_rtsp_media_get_rates: assertion failed) when
    // clients connect and drop quickly; a camera's server is started again, as a camera reboots.
    child.once('exit', () => {
      if (stopped) return
      process.stderr.write(`RTSP server on port ${port} ended (${stderr.trim().split('\n').at(-1) ?? ''}); starting it again\n`)
      setTimeout(() => {
        if (stopped) return
        current = launch()
        current.ready.catch((error: Error) => process.stderr.write(`${error.message}\n`))
      }, 200)
    })
    return { child, ready, exited }
  }

  let current = launch()
  await current.ready
  const urls = mounts.map((m) => `rtsp://127.0.0.1:${port}${m.path}`)
  return {
    url: urls[0]!,
    urls,
    media,
    get process() { return current.child },
    async stop() {
      stopped = true
      const { child, exited } = current
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}
