import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import sharp from 'sharp'
import { afterEach, describe, expect, it } from 'vitest'
import { md5Hex } from '../../shared/auth/password.ts'
import { CHANGED_PASSWORD, INITIAL_PASSWORD, freePort } from '../helpers/device.ts'

const root = path.resolve(import.meta.dirname, '../..')
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
/** Whether `pid` runs: a zombie (exited, not yet reaped by its parent) does not. */
function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))
  } catch {
    return false
  }
}

/** Polls /proc until none of `pids` runs any more (zombies count as gone); false after `ms`. */
async function allGone(pids: number[], ms: number): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (pids.every((pid) => !alive(pid))) return true
    await sleep(100)
  }
  return false
}

/** Pids of every process started with this DATA_DIR (supervisor, device, sidecar), zombies excluded. */
function processesOf(dataDir: string): number[] {
  const pids: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(`DATA_DIR=${dataDir}`) && alive(Number(name))) pids.push(Number(name))
    } catch { /* ended meanwhile, or not ours */ }
  }
  return pids
}

/** The `msg` of every line the device wrote to its log files. */
function loggedMessages(dataDir: string): string[] {
  const logDir = path.join(dataDir, 'logs')
  return readdirSync(logDir).flatMap((file) => readFileSync(path.join(logDir, file), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line).msg))
}

interface Launched {
  dataDir: string
  child: ChildProcess
  url: string
  /** Pids from the log: supervisor, device (server), sidecar. */
  pids: { supervisor: number; server: number; sidecar: number }
  exited: Promise<number | null>
  post(route: string, body: unknown, mtk?: string): Promise<any>
}

const launched: Launched[] = []
const dataDirs: string[] = []
afterEach(() => {
  // Whatever a failed test left: the process group the test made (never a pid that may be reused).
  for (const { child } of launched.splice(0)) {
    try { process.kill(-child.pid!, 'SIGKILL') } catch { /* gone */ }
  }
  for (const dir of dataDirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/**
 * Starts the device the way it is deployed: `npm start` or `node runtime/start.mjs` (systemd's
 * ExecStart), in a process group of its own so the test can signal the group as systemd does.
 */
async function launch(command: 'npm' | 'start.mjs', until: 'listening' | 'starting device' = 'listening'): Promise<Launched> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'lifecycle-'))
  dataDirs.push(dataDir)
  const port = await freePort()
  const [file, args] = command === 'npm' ? ['npm', ['start']] : [process.execPath, ['runtime/start.mjs']]
  const child = spawn(file, args, {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', WS_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info', INITIAL_ADMIN_PASSWORD: INITIAL_PASSWORD },
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const pids = { supervisor: 0, server: 0, sidecar: 0 }
  const entry: Launched = { dataDir, child, url: `http://127.0.0.1:${port}`, pids, exited, post: async () => null }
  launched.push(entry)
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('device did not start in time')), 90_000)
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let log: any
      try { log = JSON.parse(line) } catch { return }
      if (log.component === 'supervisor' && log.msg === 'starting device') {
        pids.supervisor = log.pid
        if (until === 'starting device') { clearTimeout(timer); resolve() }
      }
      // The supervisor's logger puts the sidecar's pid after the server's: JSON.parse keeps the last.
      if (log.msg === 'inference sidecar ready') pids.sidecar = log.pid
      if (log.msg === 'listening') {
        pids.server = log.pid
        clearTimeout(timer)
        resolve()
      }
    })
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`exited with ${code} before listening`)) })
  })
  entry.post = async (route, body, mtk) => {
    const response = await fetch(entry.url + route, { method: 'POST', headers: { 'content-type': 'application/json', ...(mtk ? { mtk } : {}) }, body: JSON.stringify(body) })
    return response.json()
  }
  return entry
}

async function signIn(device: Launched): Promise<string> {
  const first = await device.post('/gtw/cwai/login/DoLogin', { account: 'admin', pwd: md5Hex(INITIAL_PASSWORD) })
  await device.post('/gtw/cwai/login/ChangePassword', { oldPwd: md5Hex(INITIAL_PASSWORD), newPwd: md5Hex(CHANGED_PASSWORD) }, first.resData.mtk)
  return (await device.post('/gtw/cwai/login/DoLogin', { account: 'admin', pwd: md5Hex(CHANGED_PASSWORD) })).resData.mtk
}

describe('stopping and losing the supervisor (spec 4.11 start-up script; README: in-flight requests finish)', () => {
  it('SIGTERM to the whole process group during detections answers every detection, then everything exits 0', async () => {
    const device = await launch('start.mjs')
    const mtk = await signIn(device)
    // A large, highly compressible PNG keeps each inference running for a while.
    const image = (await sharp({ create: { width: 6000, height: 6000, channels: 3, background: '#808080' } }).png().toBuffer()).toString('base64')
    const tasks = [randomUUID(), randomUUID(), randomUUID()]
    for (const taskId of tasks) {
      expect((await device.post('/gtw/cwai/aihost/PTaskCreate', { taskId, algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) }, mtk)).resCode).toBe(1)
    }
    const answered = new Set<string>()
    const detections = tasks.map((taskId) => device.post('/gtw/cwai/aihost/PTaskDetectPic', { taskId, algorithmCode: 'face-detection', imageBase64: image }, mtk).finally(() => answered.add(taskId)))
    // The stop comes once every detection has started and while one still runs, as their tasks
    // say (QueryTaskStatus `running`), read without changing them: a PTaskCancle probe would end a
    // task whose detection's body has not arrived yet, or has just been answered. (Under load the
    // device may take the three one after another, so they need not all run at once.)
    const started = new Set<string>()
    for (;;) {
      const running = await Promise.all(tasks.map(async (taskId) => (await device.post('/v1/cwai/aihost/QueryTaskStatus', { taskId }, mtk)).resData.running as number))
      running.forEach((n, i) => { if (n >= 1) started.add(tasks[i]!) })
      if (running.some((n) => n >= 1) && tasks.every((taskId) => started.has(taskId) || answered.has(taskId))) break
      expect(answered.size, 'every detection ended before the stop').toBeLessThan(tasks.length)
      await sleep(20)
    }
    const { server, sidecar } = device.pids
    // systemd's default KillMode=control-group: every process gets SIGTERM, the server twice.
    process.kill(-device.child.pid!, 'SIGTERM')
    const answers = await Promise.all(detections)
    expect(answers.map((answer) => answer.resCode)).toEqual([1, 1, 1])
    expect(await device.exited).toBe(0)
    expect(await allGone([server, sidecar], 10_000)).toBe(true)
  }, 120_000)

  it('kill -9 of the supervisor ends the device and its sidecar by themselves', async () => {
    const device = await launch('start.mjs')
    const { server, sidecar } = device.pids
    expect(server).toBeGreaterThan(0)
    expect(sidecar).toBeGreaterThan(0)
    expect(sidecar).not.toBe(server)
    process.kill(device.child.pid!, 'SIGKILL')
    // The server stops gracefully (components, then the sidecar), though its stdout has gone with
    // the supervisor; what counts is that both end with no one signalling them.
    expect(await allGone([server, sidecar], 30_000)).toBe(true)
    expect(loggedMessages(device.dataDir)).toContain('stopped')
  }, 120_000)

  it('kill -9 of the supervisor while the device starts: the device finishes starting, then stops by itself', async () => {
    const device = await launch('start.mjs', 'starting device')
    const { supervisor } = device.pids
    // The supervisor spawns the device right after saying so; killed as soon as it has a child.
    const children = `/proc/${supervisor}/task/${supervisor}/children`
    while (readFileSync(children, 'utf8').trim() === '') await sleep(5)
    process.kill(supervisor, 'SIGKILL')
    const deadline = Date.now() + 90_000
    while (processesOf(device.dataDir).length > 0 && Date.now() < deadline) await sleep(100)
    expect(processesOf(device.dataDir)).toEqual([])
    const messages = loggedMessages(device.dataDir)
    expect(messages).toContain('stopping')
    expect(messages).toContain('stopped')
  }, 120_000)

  it('kill -9 of the device ends its sidecar', async () => {
    const device = await launch('start.mjs')
    const { server, sidecar } = device.pids
    // Stop the supervisor first so it does not start a new device meanwhile.
    process.kill(device.pids.supervisor, 'SIGSTOP')
    try {
      process.kill(server, 'SIGKILL')
      expect(await allGone([server, sidecar], 10_000)).toBe(true)
    } finally {
      process.kill(device.pids.supervisor, 'SIGKILL')
    }
  }, 120_000)

  it('SIGTERM to `npm start` alone stops the device', async () => {
    const device = await launch('npm')
    const { supervisor, server, sidecar } = device.pids
    expect(supervisor).toBeGreaterThan(0)
    process.kill(device.child.pid!, 'SIGTERM')
    expect(await allGone([supervisor, server, sidecar], 15_000)).toBe(true)
  }, 120_000)
})
