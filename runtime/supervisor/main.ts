import type { ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { loadConfig } from '../../shared/config.ts'
import { RESTART_EXIT_CODE } from '../../shared/aihost/types.ts'
import { installPending, rollBack } from '../../shared/upgrade/install.ts'
import { readUpgradeState } from '../../shared/upgrade/state.ts'
import { projectRoot } from '../paths.ts'
import { restartDelay } from './backoff.ts'
import { runChild } from './run-child.ts'

/**
 * The supervisor (`npm start` → runtime/start.mjs → here): runs the device as a child
 * process and is the start-up script of spec 4.11.
 *
 * - Before each start it installs a pending upgrade (revalidated MD5, checksums) or records
 *   why it refused it.
 * - It starts the current release (`<DATA_DIR>/releases/<version>/<entryPoint>`) or, when none
 *   is installed, the base installation (`dist/runtime/server.mjs`).
 * - After an install the new version is on probation: if it exits or does not signal readiness
 *   (IPC `device.ready`, whatever LOG_LEVEL is; see readiness.ts) within UPGRADE_PROBATION_MS,
 *   it is stopped and the previous version restored.
 * - Exit code 75 (RESTART_EXIT_CODE) from the child means "restart me" (software upgrade);
 *   another unexpected exit restarts it after a short backoff; SIGTERM/SIGINT are passed on
 *   and the supervisor exits with the child.
 */
const config = loadConfig()
const limits = { maxEntries: config.upgradeMaxEntries, maxExpandedBytes: config.upgradeMaxExpandedBytes }
const baseEntry = path.join(projectRoot, 'dist', 'runtime', 'server.mjs')

const say = (level: number, msg: string, fields: Record<string, unknown> = {}) =>
  process.stdout.write(`${JSON.stringify({ level, time: Date.now(), pid: process.pid, component: 'supervisor', ...fields, msg })}\n`)

let child: ChildProcess | null = null
let stopping = false

function forward(signal: NodeJS.Signals) {
  stopping = true
  if (child && child.exitCode === null) child.kill(signal)
  else process.exit(0)
}
process.on('SIGTERM', () => forward('SIGTERM'))
process.on('SIGINT', () => forward('SIGINT'))
// `npm start` runs us under `sh -c`; SIGTERM to npm alone ends npm and the shell but reaches
// no further, and we would be re-parented and run on unsupervised. A changed parent is a stop.
const parentAtStart = process.ppid
setInterval(() => { if (!stopping && process.ppid !== parentAtStart) forward('SIGTERM') }, 500).unref()

async function main() {
  let backoffMs: number | null = null
  for (;;) {
    const installed = await installPending(config.dataPath, projectRoot, limits, Date.now())
    if (installed.kind === 'installed') say(30, 'upgrade installed', { version: installed.release.version })
    if (installed.kind === 'refused') say(50, 'upgrade refused at start-up', { version: installed.version, reason: installed.reason })
    const current = readUpgradeState(config.dataPath).current
    const entry = current?.dir && current.entryPoint ? path.join(current.dir, current.entryPoint) : baseEntry
    const probation = installed.kind === 'installed' ? config.upgradeProbationMs : null
    say(30, 'starting device', { version: current?.version ?? baseVersion(), entry })
    const startedAt = Date.now()
    const result = await runChild({
      entry, probationMs: probation, env: { ...process.env, DEVICE_SUPERVISED: '1' },
      onSpawn: (spawned) => { child = spawned },
      onLine: (line) => process.stdout.write(`${line}\n`),
    })
    if (stopping) process.exit(result.code ?? 0)
    if (probation !== null && !result.listened) {
      const reason = result.timedOut ? `did not start listening within ${probation} ms` : `exited with code ${result.code} before listening`
      const restored = await rollBack(config.dataPath, reason, Date.now())
      say(50, 'upgrade rolled back', { version: current?.version, reason, restored: restored?.version ?? baseVersion() })
      continue
    }
    if (result.code === RESTART_EXIT_CODE) {
      say(30, 'restart requested by the device')
      backoffMs = null
      continue
    }
    backoffMs = restartDelay(backoffMs, Date.now() - startedAt)
    say(50, 'device exited unexpectedly; restarting', { code: result.code, backoffMs })
    await new Promise((resolve) => setTimeout(resolve, backoffMs!))
  }
}

function baseVersion(): string {
  try {
    return String(JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')).version)
  } catch {
    return 'unknown'
  }
}

main().catch((error) => {
  say(60, 'supervisor failed', { err: String(error?.stack ?? error) })
  process.exit(1)
})
