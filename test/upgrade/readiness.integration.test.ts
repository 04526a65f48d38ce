import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runChild } from '../../runtime/supervisor/run-child.ts'
import { probeAnswers } from '../../runtime/supervisor/probe.ts'
import { closedPort } from '../helpers/device.ts'

const root = path.resolve(import.meta.dirname, '../..')

let dir: string
beforeEach(() => { dir = mkdtempSync(path.join(tmpdir(), 'readiness-')) })
afterEach(() => rmSync(dir, { recursive: true, force: true }))

function script(name: string, source: string): string {
  const file = path.join(dir, name)
  writeFileSync(file, source)
  return file
}

describe('supervisor readiness detection (independent of LOG_LEVEL)', () => {
  it('the built device at LOG_LEVEL=warn signals readiness over IPC, answers Probe and passes probation without a listening log line', async () => {
    const lines: string[] = []
    let child: ChildProcess | null = null
    const result = await runChild({
      entry: path.join(root, 'dist/runtime/server.mjs'),
      probationMs: 30_000,
      confirm: (port, signal) => probeAnswers('127.0.0.1', port, signal),
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', WS_PORT: '0', DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'warn', INITIAL_ADMIN_PASSWORD: 'initial-Passw0rd', DEVICE_SUPERVISED: '1' },
      onSpawn: (spawned) => { child = spawned },
      // Ready (and Probe answered): stop it.
      onReady: () => child!.kill('SIGTERM'),
      onLine: (line) => lines.push(line),
    })
    expect(child).not.toBeNull()
    expect(result).toEqual({ code: 0, signal: null, listened: true, timedOut: false })
    // The old detection looked for this line; at warn it is never printed.
    expect(lines.filter((line) => line.includes('"msg":"listening"'))).toEqual([])
  })

  it('a child that never signals readiness is killed when probation ends', async () => {
    const silent = script('silent.mjs', 'setInterval(() => {}, 1000)\n')
    expect(await runChild({ entry: silent, probationMs: 300, env: process.env })).toEqual({ code: null, signal: 'SIGKILL', listened: false, timedOut: true })
  })

  it('a child that signals readiness but never answers Probe is killed when probation ends', async () => {
    const port = await closedPort()
    const mute = script('mute.mjs', `process.send({ type: 'device.ready', port: ${port}, version: '9.9.9' }); setInterval(() => {}, 1000)\n`)
    let ready = false
    const result = await runChild({ entry: mute, probationMs: 1_500, confirm: (p, signal) => probeAnswers('127.0.0.1', p, signal), env: process.env, onReady: () => { ready = true } })
    expect(result).toEqual({ code: null, signal: 'SIGKILL', listened: false, timedOut: true })
    expect(ready).toBe(false)
  })

  it('a child that exits before signalling is reported as not listened', async () => {
    const failing = script('failing.mjs', 'process.exit(3)\n')
    expect(await runChild({ entry: failing, probationMs: 5_000, env: process.env })).toEqual({ code: 3, signal: null, listened: false, timedOut: false })
  })

  it('still accepts the listening log line of releases built before the IPC signal', async () => {
    const legacy = script('legacy.mjs', 'console.log(JSON.stringify({ level: 30, msg: "listening", port: 1 })); setTimeout(() => process.exit(0), 200)\n')
    expect(await runChild({ entry: legacy, probationMs: 5_000, env: process.env })).toEqual({ code: 0, signal: null, listened: true, timedOut: false })
  })
})
