import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { WEAKEST_SCRYPT, md5Hex } from '../../shared/auth/password.ts'

export const INITIAL_PASSWORD = 'initial-Passw0rd'
export const CHANGED_PASSWORD = 'changed-Passw0rd'

export interface DeviceProcess {
  url: string
  port: number
  /** Port of the event WebSocket listener (from its log line). */
  wsPort: number
  dataDir: string
  process: ChildProcess
  /** Log lines (parsed JSON) printed so far. */
  logs: Record<string, unknown>[]
  /** POST JSON to a route; returns HTTP status and parsed body. */
  post(route: string, body?: unknown, mtk?: string, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>
  /** Signs in as admin and, when required, changes the initial password; returns a usable mtk. */
  adminToken(): Promise<string>
  /** SIGTERM and wait for exit. */
  stop(): Promise<number | null>
  /** SIGKILL and wait for exit (keeps the data folder). */
  kill(): Promise<void>
  /** Removes the data folder (after stop/kill). */
  cleanup(): void
}

export interface StartOptions {
  env?: Record<string, string>
  /** Reuse a data folder (restart after a kill); a new temporary one otherwise. */
  dataDir?: string
  /** `supervisor` runs dist/runtime/supervisor.mjs (npm start's supervisor) on a fixed free port. */
  entry?: 'server' | 'supervisor'
  /** A release executable to run instead (no argument: it acts as the supervisor), with no environment but `env` and the test settings. */
  executable?: string
  /** Its own process group (the test-only UPGRADE_TEST_KILL_AT kills the supervisor's whole group). */
  detached?: boolean
}

/**
 * Ports handed out by `freePort`: each vitest worker has a block of its own below Linux's
 * ephemeral range (32768–60999, where `listen(0)` picks), so files running side by side never
 * take the same port between "found free" and "bound", nor one the kernel hands to a `listen(0)`.
 */
const PORT_BLOCK = 500
const PORT_BASE = 20_000
const worker = Number(process.env.VITEST_POOL_ID ?? 1) % 24
// Each process starts at its own place in the block: two runs side by side (two checkouts) have
// the same pool ids, and would otherwise try the same ports at the same moments.
let nextPort = PORT_BASE + worker * PORT_BLOCK + (process.pid % PORT_BLOCK)

async function bindable(port: number): Promise<boolean> {
  const { createServer } = await import('node:net')
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    // The wildcard address: a port free there is free on 127.0.0.1 too (a device may bind 0.0.0.0).
    server.listen(port, () => server.close(() => resolve(true)))
  })
}

/** A port free right now, from this worker's own block (for runs that restart and must keep their port). */
export async function freePort(): Promise<number> {
  const first = PORT_BASE + worker * PORT_BLOCK
  for (let tries = 0; tries < PORT_BLOCK; tries++) {
    const port = nextPort
    nextPort = first + ((nextPort - first + 1) % PORT_BLOCK)
    if (await bindable(port)) return port
  }
  throw new Error(`no free port in ${first}–${first + PORT_BLOCK - 1}`)
}

/**
 * A loopback port nothing listens on, for "connection refused". Not an ephemeral port: a
 * client connecting to a free ephemeral port can be given that same port as its own and
 * connect to itself (TCP simultaneous open), reading back what it sent.
 */
export async function closedPort(): Promise<number> {
  const { connect } = await import('node:net')
  const refuses = (port: number) => new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.destroy(); resolve(false) })
    socket.once('error', () => resolve(true))
  })
  for (let port = 9; port < 1024; port++) if (await refuses(port)) return port
  throw new Error('every port below 1024 answers on 127.0.0.1')
}

const root = path.resolve(import.meta.dirname, '../..')

/** Starts the built runtime (`dist/runtime/server.mjs`) on an ephemeral port with its own data folder. */
export async function startDevice(options: StartOptions = {}): Promise<DeviceProcess> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(tmpdir(), 'device-test-'))
  const supervised = options.entry === 'supervisor' || options.executable !== undefined
  const fixedPort = supervised ? await freePort() : 0
  // Above info the device prints no `listening` line: a supervised device (fixed port) is then probed.
  const quiet = ['warn', 'error', 'fatal', 'silent'].includes(options.env?.LOG_LEVEL ?? '')
  if (quiet && !supervised) throw new Error('a device started quiet must be supervised (fixed port) to be probed')
  const [command, args, cwd]: [string, string[], string] = options.executable
    ? [options.executable, [], path.dirname(options.executable)]
    : [process.execPath, [path.join(root, supervised ? 'dist/runtime/supervisor.mjs' : 'dist/runtime/server.mjs')], root]
  const child = spawn(command, args, {
    cwd,
    env: {
      ...(options.executable ? {} : process.env),
      PORT: String(fixedPort),
      HOST: '127.0.0.1',
      WS_PORT: '0',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      INITIAL_ADMIN_PASSWORD: INITIAL_PASSWORD,
      // Tests sign in hundreds of times: the cheapest password hash allowed (the shipped default is OWASP's minimum).
      PASSWORD_SCRYPT: WEAKEST_SCRYPT,
      PASSWORD_SCRYPT_ALLOW_WEAK: 'true',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  })
  const logs: Record<string, unknown>[] = []
  let stderr = ''
  child.stderr!.on('data', (chunk) => { stderr += chunk })
  let wsPort = 0
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`device did not start in time\n${stderr}`)), 60_000)
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const entry = JSON.parse(line)
        logs.push(entry)
        if (entry.msg === 'events websocket listening') wsPort = entry.port
        if (entry.msg === 'listening') {
          clearTimeout(timer)
          resolve(entry.port)
        }
      } catch {
        // not a log line
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`device exited with ${code} before listening\n${stderr}`))
    })
    if (quiet) {
      const probe = async (): Promise<void> => {
        const alive = await fetch(`http://127.0.0.1:${fixedPort}/v1/cwai/aihost/Probe`).then((r) => r.ok, () => false)
        if (alive) {
          clearTimeout(timer)
          resolve(fixedPort)
        } else if (child.exitCode === null) setTimeout(() => { void probe() }, 200)
      }
      void probe()
    }
  })
  const url = `http://127.0.0.1:${port}`
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))

  const post: DeviceProcess['post'] = async (route, body = {}, mtk, headers = {}) => {
    const response = await fetch(url + route, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(mtk ? { mtk } : {}), ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    })
    const text = await response.text()
    let parsed: unknown = text
    try {
      parsed = JSON.parse(text)
    } catch {
      // non-JSON body
    }
    return { status: response.status, body: parsed, headers: response.headers }
  }

  let token: string | null = null
  const adminToken = async () => {
    if (token) return token
    let login = await post('/gtw/cwai/login/DoLogin', { account: 'admin', pwd: md5Hex(INITIAL_PASSWORD) })
    if (login.body.resCode !== 1) login = await post('/gtw/cwai/login/DoLogin', { account: 'admin', pwd: md5Hex(CHANGED_PASSWORD) })
    if (login.body.resCode !== 1) throw new Error(`sign-in failed: ${JSON.stringify(login.body)}`)
    if (login.body.resData.passwordChangeRequired) {
      const change = await post('/gtw/cwai/login/ChangePassword', { oldPwd: md5Hex(INITIAL_PASSWORD), newPwd: md5Hex(CHANGED_PASSWORD) }, login.body.resData.mtk)
      if (change.body.resCode !== 1) throw new Error(`password change failed: ${JSON.stringify(change.body)}`)
      login = await post('/gtw/cwai/login/DoLogin', { account: 'admin', pwd: md5Hex(CHANGED_PASSWORD) })
    }
    token = login.body.resData.mtk as string
    return token
  }

  return {
    url,
    port,
    wsPort,
    dataDir,
    process: child,
    logs,
    post,
    adminToken,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM')
      return exited
    },
    async kill() {
      if (child.exitCode === null) child.kill('SIGKILL')
      await exited
    },
    cleanup() {
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
