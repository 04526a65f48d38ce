import { existsSync } from 'node:fs'
import { readdir, rename, rm, symlink } from 'node:fs/promises'
import path from 'node:path'
import { isApiError } from '../../shared/errors/index.ts'
import type { ArchiveLimits } from '../archive/safe-unpack.ts'
import { syncPath, syncTree } from './durable.ts'
import { clearJournal, MAX_INSTALL_ATTEMPTS, MAX_PROBATION_STARTS, readJournal, writeJournal } from './journal.ts'
import type { KillPoint } from './kill-point.ts'
import { checkMd5, extractPackage, inspectArchive, parsePackageName } from './package.ts'
import type { InstalledRelease, UpgradeState } from '../../shared/upgrade/types.ts'
import { readUpgradeState, releasesDir, upgradeDir, writeUpgradeState } from './state.ts'

export type InstallOutcome =
  | { kind: 'none' }
  | { kind: 'installed'; release: InstalledRelease }
  | { kind: 'refused'; version: string; reason: string }

/** Called after each install step (the test-only kill points of kill-point.ts). */
export type Checkpoint = (step: KillPoint) => void
const noCheckpoint: Checkpoint = () => {}

const reasonOf = (error: unknown) => isApiError(error) ? `${error.item.messageKey} ${JSON.stringify(error.item.details)}` : String((error as Error)?.message ?? error)

/**
 * Start-up half of the upgrade (spec 4.11 "after reboot a startup script revalidates the MD5
 * and installs the package"), run by the supervisor before it starts the runtime. The package
 * is checked again from its kept file (MD5, archive safety, checksums after extraction), put
 * in `<DATA_DIR>/releases/<version>`, given the base installation's `node_modules`, and made
 * current. A refusal clears the pending record and records why; the current release stays.
 *
 * Crash-safe (docs/system.md "Rollback and power cuts"): the journal says `install` before the
 * first byte is written, the release is extracted beside its final place and flushed before it
 * is renamed into it, and the journal says `probation` before the record (flushed, renamed)
 * switches the current version. A start after a power cut in any step installs again from the
 * kept package (at most MAX_INSTALL_ATTEMPTS times) or finds the switch done.
 */
export async function installPending(dataPath: string, baseRoot: string, limits: ArchiveLimits, now: number, checkpoint: Checkpoint = noCheckpoint): Promise<InstallOutcome> {
  const state = readUpgradeState(dataPath)
  const pending = state.pending
  if (!pending) return { kind: 'none' }
  const releaseDir = path.join(releasesDir(dataPath), pending.version)
  const finish = async (next: UpgradeState) => {
    writeUpgradeState(dataPath, next)
    await rm(pending.stagingDir, { recursive: true, force: true })
    await rm(pending.packageFile, { force: true })
  }
  const journal = readJournal(dataPath)
  const interrupted = journal && journal.version === pending.version ? journal.installAttempts : 0
  const startedAt = journal && journal.version === pending.version ? journal.startedAt : now
  const times = { stagedAt: pending.stagedAt, startedAt }
  try {
    if (interrupted >= MAX_INSTALL_ATTEMPTS) throw new Error(`the install was interrupted ${interrupted} times (power cut or kill); refused`)
    writeJournal(dataPath, { version: pending.version, fromVersion: pending.fromVersion, phase: 'install', installAttempts: interrupted + 1, probationStarts: 0, startedAt, stagedAt: pending.stagedAt })
    const name = parsePackageName(pending.packageName, pending.product)
    await checkMd5(pending.packageFile, name)
    const listing = await inspectArchive(pending.packageFile, name, limits)
    checkpoint('verify')
    const fresh = `${releaseDir}.installing`
    await extractPackage(pending.packageFile, fresh, listing)
    // Releases share the dependencies of the installation the supervisor runs from.
    if (!existsSync(path.join(fresh, 'node_modules'))) await symlink(path.join(baseRoot, 'node_modules'), path.join(fresh, 'node_modules'), 'dir')
    await syncTree(fresh)
    checkpoint('extract')
    await rm(releaseDir, { recursive: true, force: true })
    await rename(fresh, releaseDir)
    syncPath(releasesDir(dataPath))
    checkpoint('switch')
    const release: InstalledRelease = { version: pending.version, dir: releaseDir, entryPoint: listing.manifest.entryPoint, installedAt: now }
    writeJournal(dataPath, { version: pending.version, fromVersion: pending.fromVersion, phase: 'probation', installAttempts: interrupted + 1, probationStarts: 1, startedAt, stagedAt: pending.stagedAt })
    await finish({
      current: release,
      previous: state.current ?? { version: pending.fromVersion, dir: null, entryPoint: null, installedAt: 0 },
      pending: null,
      history: [...state.history, { version: pending.version, fromVersion: pending.fromVersion, outcome: 'installed', reason: null, at: now, ...times }],
    })
    checkpoint('switched')
    await removeStrays(dataPath)
    return { kind: 'installed', release }
  } catch (error) {
    const reason = reasonOf(error)
    await rm(`${releaseDir}.installing`, { recursive: true, force: true })
    await finish({ ...state, pending: null, history: [...state.history, { version: pending.version, fromVersion: pending.fromVersion, outcome: 'refused', reason, at: now, ...times }] })
    clearJournal(dataPath)
    return { kind: 'refused', version: pending.version, reason }
  }
}

/**
 * The installed release did not come up: the previous one becomes current again, the failed
 * release folder is removed and the last history entry says why (not yet reported: the
 * restored version emits `upgrade.finished` for it).
 */
export async function rollBack(dataPath: string, reason: string, now: number, checkpoint: Checkpoint = noCheckpoint): Promise<InstalledRelease | null> {
  const state = readUpgradeState(dataPath)
  const failed = state.current
  if (!failed) return null
  const restored = state.previous && state.previous.dir !== null ? state.previous : null
  const history = [...state.history]
  const last = history.at(-1)
  if (last && last.version === failed.version && last.outcome === 'installed') {
    const { reportedAt: _reported, ...entry } = last
    history[history.length - 1] = { ...entry, outcome: 'rolled-back', reason, at: now }
  } else history.push({ version: failed.version, fromVersion: state.previous?.version ?? failed.version, outcome: 'rolled-back', reason, at: now })
  writeUpgradeState(dataPath, { current: restored, previous: null, pending: null, history })
  checkpoint('rollback')
  if (failed.dir) await rm(failed.dir, { recursive: true, force: true })
  clearJournal(dataPath)
  return restored
}

export type StartPlan =
  | { kind: 'normal'; installed: InstallOutcome }
  | { kind: 'probation'; version: string; start: number; installed: InstallOutcome }
  | { kind: 'rolled-back'; version: string; reason: string; restored: InstalledRelease | null }

/**
 * What the supervisor does before a start, from the journal and the record (docs/system.md
 * "Rollback and power cuts"):
 * - the journal says `probation` and the new version is current: the last start of it never
 *   proved itself (power cut or kill); it gets another start on probation, or after
 *   MAX_PROBATION_STARTS it is rolled back;
 * - the journal says `probation` but the switch never happened, or `install`: the install
 *   runs again from the kept package (installPending counts the attempts);
 * - a pending upgrade is installed and its first start is on probation.
 */
export async function prepareStart(dataPath: string, baseRoot: string, limits: ArchiveLimits, now: number, checkpoint: Checkpoint = noCheckpoint): Promise<StartPlan> {
  const journal = readJournal(dataPath)
  const state = readUpgradeState(dataPath)
  if (journal?.phase === 'probation' && state.current?.version === journal.version && !state.pending) {
    if (journal.probationStarts >= MAX_PROBATION_STARTS) {
      const reason = `started ${journal.probationStarts} times on probation and never became ready: the supervisor was stopped each time (power cut or kill)`
      const restored = await rollBack(dataPath, reason, now, checkpoint)
      return { kind: 'rolled-back', version: journal.version, reason, restored }
    }
    writeJournal(dataPath, { ...journal, probationStarts: journal.probationStarts + 1 })
    return { kind: 'probation', version: journal.version, start: journal.probationStarts + 1, installed: { kind: 'none' } }
  }
  if (journal && (!state.pending || state.pending.version !== journal.version)) clearJournal(dataPath)
  const installed = await installPending(dataPath, baseRoot, limits, now, checkpoint)
  if (installed.kind === 'installed') return { kind: 'probation', version: installed.release.version, start: 1, installed }
  return { kind: 'normal', installed }
}

/** The new version proved itself: the journal is done with. */
export function endProbation(dataPath: string) {
  clearJournal(dataPath)
}

/**
 * Removes what an interrupted step can leave behind (docs/system.md "Rollback and power
 * cuts"): release folders other than the current and previous ones (`*.installing` included),
 * staged copies and kept packages no pending upgrade names, temporary record files. Run by the
 * supervisor while no device runs.
 */
export async function removeStrays(dataPath: string): Promise<string[]> {
  const state = readUpgradeState(dataPath)
  const removed: string[] = []
  const keep = new Set([state.current?.dir, state.previous?.dir, state.pending?.stagingDir, state.pending?.packageFile].filter((p): p is string => typeof p === 'string'))
  const sweep = async (dir: string, isStray: (full: string, name: string) => boolean) => {
    if (!existsSync(dir)) return
    for (const name of await readdir(dir)) {
      const full = path.join(dir, name)
      if (!isStray(full, name)) continue
      await rm(full, { recursive: true, force: true })
      removed.push(path.relative(dataPath, full))
    }
  }
  await sweep(releasesDir(dataPath), (full) => !keep.has(full))
  await sweep(path.join(upgradeDir(dataPath), 'staging'), (full) => !keep.has(full))
  await sweep(path.join(upgradeDir(dataPath), 'packages'), (full) => !keep.has(full))
  await sweep(upgradeDir(dataPath), (_full, name) => name.endsWith('.tmp'))
  return removed
}
