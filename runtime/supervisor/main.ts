import type { ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { loadConfig } from '../../shared/config.ts'
import { RESTART_EXIT_CODE } from '../../shared/aihost/types.ts'
import { endProbation, prepareStart, removeStrays, rollBack, type Checkpoint } from '../upgrade/install.ts'
import { killPoint, processGroup } from '../upgrade/kill-point.ts'
import { readUpgradeState } from '../upgrade/state.ts'
import { projectRoot } from '../paths.ts'
import { restartDelay } from './backoff.ts'
import { probeAnswers } from './probe.ts'
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
 *   (IPC `device.ready`, whatever LOG_LEVEL is; see readiness.ts) and answer `Probe` within
 *   UPGRADE_PROBATION_MS, it is stopped and the previous version restored. The install journal
 *   (runtime/upgrade/journal.ts) carries the probation over a power cut or kill
 *   (docs/system.md "Rollback and power cuts").
 * - Each start of the device is a boot of spec 4.11: the device gets a new `bootId`
 *   (DEVICE_BOOT_ID), so a client sees that the restart of an upgrade or rollback happened.
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

// TEST ONLY (docs/configuration.md UPGRADE_TEST_KILL_AT): kill points SIGKILL the group this supervisor leads.
const killAt = config.upgradeTestKillAt
if (killAt && processGroup() !== process.pid) {
  say(60, 'UPGRADE_TEST_KILL_AT needs a supervisor that leads its process group (started detached); refusing to start')
  process.exit(1)
}
const checkpoint: Checkpoint = (step) => killPoint(step, killAt, process.pid)

async function main() {
  let backoffMs: number | null = null
  const strays = await removeStrays(config.dataPath)
  if (strays.length) say(40, 'removed what an interrupted upgrade left behind', { removed: strays })
  for (;;) {
    const plan = await prepareStart(config.dataPath, projectRoot, limits, Date.now(), checkpoint)
    if (plan.kind !== 'rolled-back' && plan.installed.kind === 'installed') say(30, 'upgrade installed', { version: plan.installed.release.version })
    if (plan.kind !== 'rolled-back' && plan.installed.kind === 'refused') say(50, 'upgrade refused at start-up', { version: plan.installed.version, reason: plan.installed.reason })
    if (plan.kind === 'rolled-back') say(50, 'upgrade rolled back', { version: plan.version, reason: plan.reason, restored: plan.restored?.version ?? baseVersion() })
    const current = readUpgradeState(config.dataPath).current
    const entry = current?.dir && current.entryPoint ? path.join(current.dir, current.entryPoint) : baseEntry
    const probation = plan.kind === 'probation' ? config.upgradeProbationMs : null
    const bootId = randomUUID()
    say(30, 'starting device', { version: current?.version ?? baseVersion(), entry, bootId, ...(plan.kind === 'probation' ? { probation: { probationMs: probation, start: plan.start } } : {}) })
    const startedAt = Date.now()
    const result = await runChild({
      entry, probationMs: probation, env: { ...process.env, DEVICE_SUPERVISED: '1', DEVICE_BOOT_ID: bootId },
      confirm: (port, signal) => probeAnswers(config.host, port, signal),
      onSpawn: (spawned) => {
        child = spawned
        if (probation !== null) checkpoint('first-start')
      },
      onReady: () => {
        if (probation === null) return
        endProbation(config.dataPath)
        say(30, 'upgrade probation passed', { version: current?.version, afterMs: Date.now() - startedAt })
      },
      onLine: (line) => process.stdout.write(`${line}\n`),
    })
    if (stopping) process.exit(result.code ?? 0)
    if (probation !== null && !result.listened) {
      const reason = result.timedOut
        ? `did not signal readiness and answer Probe within ${probation} ms`
        : `exited with ${result.code === null ? `signal ${result.signal}` : `code ${result.code}`} before it was ready`
      const restored = await rollBack(config.dataPath, reason, Date.now(), checkpoint)
      say(50, 'upgrade rolled back', { version: current?.version, reason, restored: restored?.version ?? baseVersion(), afterMs: Date.now() - startedAt })
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
