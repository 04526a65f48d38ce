import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { writeFileDurable } from './durable.ts'

/**
 * The upgrade record, a JSON file under `<DATA_DIR>/upgrade/` (not the database: the
 * supervisor reads it before any version of the runtime, and its schema, is running).
 */
export interface InstalledRelease {
  version: string
  /** Absolute folder of the release; null = the base installation the supervisor runs from. */
  dir: string | null
  entryPoint: string | null
  installedAt: number
}

export interface PendingUpgrade {
  version: string
  product: string
  /** The package file kept for the start-up revalidation (inside upgrade/packages/). */
  packageFile: string
  packageName: string
  md5: string
  /** The validated, extracted package (inside upgrade/staging/). */
  stagingDir: string
  entryPoint: string
  stagedAt: number
  requestedBy: string | null
  fromVersion: string
}

export interface UpgradeRecord {
  version: string
  fromVersion: string
  outcome: 'installed' | 'rolled-back' | 'refused'
  reason: string | null
  /** When the outcome was decided (ms since epoch). */
  at: number
  /** When the package was staged, and when the start-up install began (ms since epoch). */
  stagedAt?: number
  startedAt?: number
  /** When the running device emitted `upgrade.finished` for it. */
  reportedAt?: number
}

export interface UpgradeState {
  current: InstalledRelease | null
  previous: InstalledRelease | null
  pending: PendingUpgrade | null
  /** Oldest first, at most HISTORY_LIMIT entries. */
  history: UpgradeRecord[]
}

const HISTORY_LIMIT = 50

export const upgradeDir = (dataPath: string) => path.join(dataPath, 'upgrade')
export const releasesDir = (dataPath: string) => path.join(dataPath, 'releases')
const stateFile = (dataPath: string) => path.join(upgradeDir(dataPath), 'state.json')

export function readUpgradeState(dataPath: string): UpgradeState {
  const file = stateFile(dataPath)
  if (!existsSync(file)) return { current: null, previous: null, pending: null, history: [] }
  try {
    const state = JSON.parse(readFileSync(file, 'utf8')) as UpgradeState
    return { current: state.current ?? null, previous: state.previous ?? null, pending: state.pending ?? null, history: state.history ?? [] }
  } catch {
    return { current: null, previous: null, pending: null, history: [] }
  }
}

/** Flushed to a temporary file and renamed (durable.ts): a crash or power cut never leaves half a record. */
export function writeUpgradeState(dataPath: string, state: UpgradeState) {
  writeFileDurable(stateFile(dataPath), JSON.stringify({ ...state, history: state.history.slice(-HISTORY_LIMIT) }, null, 2))
}
