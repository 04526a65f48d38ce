import { spawn } from 'node:child_process'
import { cpSync, lstatSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { WEAKEST_SCRYPT } from '../../shared/auth/password.ts'
import { cropFace, samplePhoto } from '../galleries/faces.ts'
import { INITIAL_PASSWORD, freePort, type DeviceProcess } from './device.ts'
import { writePackage } from './tarball.ts'

/**
 * Power cuts during an upgrade, for test/upgrade/rollback.e2e.test.ts and the reliability
 * suite's `upgrade` part: the supervisor run in its own process group with the test-only
 * UPGRADE_TEST_KILL_AT (runtime/upgrade/kill-point.ts), which SIGKILLs the whole group at a step.
 */
const root = path.resolve(import.meta.dirname, '../..')

/** A small package whose entry point is `script` (it never becomes a working device). */
export const brokenPackage = (dir: string, version: string, script: string) =>
  writePackage(dir, { version, files: { 'dist/runtime/server.mjs': script, 'package.json': JSON.stringify({ version }) } })

/** Packages of the three ways a new version fails to start. */
export const FAILING_STARTS = {
  crash: 'console.error("this release cannot start"); process.exit(3)\n',
  hang: 'setInterval(() => {}, 1000)\n',
  /** Signals readiness on a port where nothing answers `Probe`. */
  silent: (port: number) => `process.send({ type: 'device.ready', port: ${port}, version: 'silent' }); setInterval(() => {}, 1000)\n`,
}

/** The supervisor-side kill points and what the next start must give (docs/system.md "Rollback and power cuts"). */
export const SUPERVISOR_KILLS: { step: string; expected: 'installed' | 'rolled-back'; broken?: boolean }[] = [
  { step: 'verify', expected: 'installed' },
  { step: 'extract', expected: 'installed' },
  { step: 'switch', expected: 'installed' },
  { step: 'switched', expected: 'installed' },
  { step: 'first-start', expected: 'installed' },
  { step: 'rollback', expected: 'rolled-back', broken: true },
]

/** A copy of a stopped device's data folder (its sockets are not files to copy). */
export function copyDataDir(from: string, to: string) {
  cpSync(from, to, { recursive: true, filter: (source) => !lstatSync(source).isSocket() })
}

/** Live processes whose environment names `dataDir` (each run's data folder is its own). */
export function processesOf(dataDir: string): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (!readFileSync(`/proc/${entry}/environ`, 'utf8').includes(`DATA_DIR=${dataDir}\0`)) continue
      if (!/^State:\s+Z/m.test(readFileSync(`/proc/${entry}/status`, 'utf8'))) found.push(Number(entry))
    } catch { /* gone */ }
  }
  return found
}

/** Runs the supervisor in its own process group with a kill point; resolves when it died (the whole group killed). */
export async function runUntilKilled(dataDir: string, step: string, env: Record<string, string> = {}, timeoutMs = 120_000) {
  const child = spawn(process.execPath, [path.join(root, 'dist/runtime/supervisor.mjs')], {
    cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env, PORT: String(await freePort()), HOST: '127.0.0.1', WS_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info',
      INITIAL_ADMIN_PASSWORD: INITIAL_PASSWORD, PASSWORD_SCRYPT: WEAKEST_SCRYPT, PASSWORD_SCRYPT_ALLOW_WEAK: 'true',
      UPGRADE_TEST_KILL_AT: step, ...env,
    },
  })
  const lines: string[] = []
  createInterface({ input: child.stdout! }).on('line', (line) => lines.push(line))
  let stderr = ''
  child.stderr!.on('data', (chunk) => { stderr += chunk })
  const exit = await new Promise<{ code: number | null; signal: string | null }>((resolve, reject) => {
    const timer = setTimeout(() => {
      try { process.kill(-child.pid!, 'SIGKILL') } catch { /* gone */ }
      reject(new Error(`the supervisor did not reach ${step}\n${lines.slice(-20).join('\n')}\n${stderr}`))
    }, timeoutMs)
    child.once('exit', (code, signal) => { clearTimeout(timer); resolve({ code, signal }) })
  })
  const reached = lines.some((l) => l.includes('"msg":"test kill point reached: SIGKILL of the process group"') && l.includes(`"step":"${step}"`))
  return { ...exit, reached, lines }
}

/**
 * The data both runs check survives every upgrade step: a gallery `staff` with person `ada` and
 * the first face of a sample photo, and a webhook setting with a secret. Throws on a refusal.
 */
export async function seedKeptData(device: DeviceProcess, mtk: string): Promise<void> {
  const ok = async (route: string, body: unknown) => {
    const answer = (await device.post(route, body, mtk)).body
    if (answer.resCode !== 1) throw new Error(`${route}: ${JSON.stringify(answer.resMsg)}`)
  }
  const face = await cropFace(await samplePhoto(device, mtk, 1), 0)
  await ok('/gtw/cwai/Library/AddLibrary', { galleryId: 'staff', name: 'Staff' })
  await ok('/gtw/cwai/Library/AddPerson', { galleryId: 'staff', personId: 'ada', name: 'Ada' })
  await ok('/gtw/cwai/Library/AddPersonImage', { galleryId: 'staff', personId: 'ada', imageBase64: face.toString('base64') })
  await ok('/gtw/cwai/System/SetHttpParam', { enabled: false, urls: ['http://127.0.0.1:9/hook'], secret: 'Hook-Secret-999' })
}
