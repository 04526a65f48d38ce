import { freePort } from './device.ts'
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createConnection } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'

export interface Broker {
  url: string
  port: number
  /** SIGTERM; mosquitto writes its persistence file (sessions, queued QoS 1 messages). */
  stop(): Promise<void>
  /** Starts again on the same port with the same persistence. */
  start(): Promise<void>
  cleanup(): Promise<void>
}

async function waitForPort(port: number, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: '127.0.0.1' }, () => {
        socket.end()
        resolve(true)
      })
      socket.on('error', () => resolve(false))
    })
    if (open) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`mosquitto did not listen on ${port}`)
}

export interface BrokerOptions {
  /** User name → password; with users, anonymous clients are refused. */
  users?: Record<string, string>
  /** Lines of the ACL file (mosquitto.conf(5) `acl_file`). */
  acl?: string[]
}

/** A real mosquitto (Debian package) on a free port with a generated config and persistence. */
export async function startBroker(options: BrokerOptions = {}): Promise<Broker> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mosquitto-test-'))
  // Started as root, mosquitto drops to its own user: it must be able to write its
  // persistence file here.
  chmodSync(dir, 0o777)
  const port = await freePort()
  const configFile = path.join(dir, 'mosquitto.conf')
  const access: string[] = []
  if (options.users) {
    const passwords = path.join(dir, 'passwords')
    writeFileSync(passwords, '', { mode: 0o644 })
    for (const [user, password] of Object.entries(options.users)) execFileSync('mosquitto_passwd', ['-b', passwords, user, password])
    chmodSync(passwords, 0o644)
    access.push(`password_file ${passwords}`)
  }
  if (options.acl) {
    writeFileSync(path.join(dir, 'acl'), `${options.acl.join('\n')}\n`, { mode: 0o644 })
    access.push(`acl_file ${path.join(dir, 'acl')}`)
  }
  writeFileSync(configFile, [
    `listener ${port} 127.0.0.1`,
    `allow_anonymous ${options.users ? 'false' : 'true'}`,
    ...access,
    'persistence true',
    `persistence_location ${dir}/`,
    'autosave_interval 1',
    'log_dest stderr',
    'log_type error',
    'log_type warning',
    '',
  ].join('\n'))
  let child: ChildProcess | null = null
  let stderr = ''
  const start = async () => {
    child = spawn('mosquitto', ['-c', configFile], { stdio: ['ignore', 'ignore', 'pipe'] })
    child.stderr!.on('data', (chunk) => { stderr += chunk })
    child.once('exit', (code) => { if (code && code !== 0) stderr += `\nexited with ${code}` })
    await waitForPort(port).catch((error) => { throw new Error(`${error.message}\n${stderr}`) })
  }
  const stop = async () => {
    const running = child
    child = null
    if (!running || running.exitCode !== null) return
    const exited = new Promise((resolve) => running.once('exit', resolve))
    running.kill('SIGTERM')
    await exited
  }
  await start()
  return {
    url: `mqtt://127.0.0.1:${port}`,
    port,
    start,
    stop,
    async cleanup() {
      await stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
