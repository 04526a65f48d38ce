import { copyFile, mkdir, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { ApiError } from '../../shared/errors/index.ts'
import type { ArchiveLimits } from '../archive/safe-unpack.ts'
import { compareVersions, extractPackage, validatePackage } from './package.ts'
import type { PendingUpgrade } from '../../shared/upgrade/types.ts'
import { readUpgradeState, upgradeDir, writeUpgradeState } from './state.ts'
import { withStagingLock } from './staging-lock.ts'
import { syncPath, syncTree } from './durable.ts'
import { killPoint } from './kill-point.ts'

export interface StageRequest {
  dataPath: string
  /** The package file (a claimed upload); moved or copied into upgrade/packages/. */
  file: string
  take: 'move' | 'copy'
  originalFilename: string
  product: string
  limits: ArchiveLimits
  runningVersion: string
  requestedBy: string | null
  now: number
  /** TEST ONLY: UPGRADE_TEST_KILL_AT and the supervisor's pid (kill-point.ts). */
  killAt?: { step: string; groupLeader: number | null }
}

/**
 * Everything before the restart (spec 4.11): validates name, MD5, archive safety and layout,
 * extracts into upgrade/staging/<version> verifying every checksum, keeps the package for the
 * start-up revalidation, and records the pending upgrade. On any refusal nothing is recorded
 * and nothing staged stays behind. Serialized per data folder (staging-lock.ts).
 */
export function stageUpgrade(request: StageRequest): Promise<PendingUpgrade> {
  return withStagingLock(request.dataPath, () => stageNow(request))
}

async function stageNow(request: StageRequest): Promise<PendingUpgrade> {
  const state = readUpgradeState(request.dataPath)
  if (state.pending) throw new ApiError('UpgradeInProgress', { details: { version: state.pending.version } })
  const { name, listing } = await validatePackage(request.file, request.originalFilename, request.product, request.limits)
  if (compareVersions(name.version, request.runningVersion) <= 0)
    throw new ApiError('UpgradeNotNewer', { details: { version: name.version, runningVersion: request.runningVersion } })

  const base = upgradeDir(request.dataPath)
  const stagingDir = path.join(base, 'staging', name.version)
  const packageFile = path.join(base, 'packages', request.originalFilename)
  try {
    await extractPackage(request.file, stagingDir, listing)
    await mkdir(path.dirname(packageFile), { recursive: true })
    if (request.take === 'move') await rename(request.file, packageFile).catch(() => copyFile(request.file, packageFile))
    else await copyFile(request.file, packageFile)
    // On disk before the pending record names them: a power cut cannot leave a recorded but empty package.
    await syncTree(stagingDir)
    syncPath(packageFile)
    syncPath(path.dirname(packageFile))
    if (request.killAt) killPoint('stage', request.killAt.step, request.killAt.groupLeader)
  } catch (error) {
    await rm(stagingDir, { recursive: true, force: true })
    await rm(packageFile, { force: true })
    throw error
  }
  const pending: PendingUpgrade = {
    version: name.version,
    product: name.product,
    packageFile,
    packageName: request.originalFilename,
    md5: name.md5,
    stagingDir,
    entryPoint: listing.manifest.entryPoint,
    stagedAt: request.now,
    requestedBy: request.requestedBy,
    fromVersion: request.runningVersion,
  }
  writeUpgradeState(request.dataPath, { ...state, pending })
  if (request.killAt) killPoint('staged', request.killAt.step, request.killAt.groupLeader)
  return pending
}
