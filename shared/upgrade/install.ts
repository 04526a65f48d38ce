import { existsSync } from 'node:fs'
import { readdir, rename, rm, symlink } from 'node:fs/promises'
import path from 'node:path'
import { isApiError } from '../errors/index.ts'
import type { ArchiveLimits } from '../archive/safe-unpack.ts'
import { checkMd5, extractPackage, inspectArchive, parsePackageName } from './package.ts'
import { readUpgradeState, releasesDir, writeUpgradeState, type InstalledRelease, type UpgradeState } from './state.ts'

export type InstallOutcome =
  | { kind: 'none' }
  | { kind: 'installed'; release: InstalledRelease }
  | { kind: 'refused'; version: string; reason: string }

const reasonOf = (error: unknown) => isApiError(error) ? `${error.item.messageKey} ${JSON.stringify(error.item.details)}` : String((error as Error)?.message ?? error)

/**
 * Start-up half of the upgrade (spec 4.11 "after reboot a startup script revalidates the MD5
 * and installs the package"), run by the supervisor before it starts the runtime. The package
 * is checked again from its kept file (MD5, archive safety, checksums after extraction), put
 * in `<DATA_DIR>/releases/<version>`, given the base installation's `node_modules`, and made
 * current. A refusal clears the pending record and records why; the current release stays.
 */
export async function installPending(dataPath: string, baseRoot: string, limits: ArchiveLimits, now: number): Promise<InstallOutcome> {
  const state = readUpgradeState(dataPath)
  const pending = state.pending
  if (!pending) return { kind: 'none' }
  const releaseDir = path.join(releasesDir(dataPath), pending.version)
  const finish = async (next: UpgradeState) => {
    writeUpgradeState(dataPath, next)
    await rm(pending.stagingDir, { recursive: true, force: true })
    await rm(pending.packageFile, { force: true })
  }
  try {
    const name = parsePackageName(pending.packageName, pending.product)
    await checkMd5(pending.packageFile, name)
    const listing = await inspectArchive(pending.packageFile, name, limits)
    const fresh = `${releaseDir}.installing`
    await extractPackage(pending.packageFile, fresh, listing)
    // Releases share the dependencies of the installation the supervisor runs from.
    if (!existsSync(path.join(fresh, 'node_modules'))) await symlink(path.join(baseRoot, 'node_modules'), path.join(fresh, 'node_modules'), 'dir')
    await rm(releaseDir, { recursive: true, force: true })
    await rename(fresh, releaseDir)
    const release: InstalledRelease = { version: pending.version, dir: releaseDir, entryPoint: listing.manifest.entryPoint, installedAt: now }
    await finish({
      current: release,
      previous: state.current ?? { version: pending.fromVersion, dir: null, entryPoint: null, installedAt: 0 },
      pending: null,
      history: [...state.history, { version: pending.version, fromVersion: pending.fromVersion, outcome: 'installed', reason: null, at: now }],
    })
    // Keep the new release and the one to roll back to; older ones only take disk space.
    const previousDir = state.current?.dir ?? null
    for (const name of await readdir(releasesDir(dataPath))) {
      const dir = path.join(releasesDir(dataPath), name)
      if (dir !== releaseDir && dir !== previousDir) await rm(dir, { recursive: true, force: true })
    }
    return { kind: 'installed', release }
  } catch (error) {
    const reason = reasonOf(error)
    await rm(`${releaseDir}.installing`, { recursive: true, force: true })
    await finish({ ...state, pending: null, history: [...state.history, { version: pending.version, fromVersion: pending.fromVersion, outcome: 'refused', reason, at: now }] })
    return { kind: 'refused', version: pending.version, reason }
  }
}

/**
 * The installed release did not come up: the previous one becomes current again, the failed
 * release folder is removed and the last history entry says why.
 */
export async function rollBack(dataPath: string, reason: string, now: number): Promise<InstalledRelease | null> {
  const state = readUpgradeState(dataPath)
  const failed = state.current
  if (!failed) return null
  const restored = state.previous && state.previous.dir !== null ? state.previous : null
  const history = [...state.history]
  const last = history.at(-1)
  if (last && last.version === failed.version && last.outcome === 'installed') history[history.length - 1] = { ...last, outcome: 'rolled-back', reason, at: now }
  else history.push({ version: failed.version, fromVersion: state.previous?.version ?? failed.version, outcome: 'rolled-back', reason, at: now })
  writeUpgradeState(dataPath, { current: restored, previous: null, pending: null, history })
  if (failed.dir) await rm(failed.dir, { recursive: true, force: true })
  return restored
}
