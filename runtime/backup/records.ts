import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'

/**
 * The files that carry a restore or a factory reset across the restart. They are files, not
 * rows: the restart replaces the database, and a factory reset removes it.
 */
export const backupDirOf = (dataPath: string) => path.join(dataPath, 'backup')
export const restoreDirOf = (dataPath: string) => path.join(dataPath, 'restore')
const pendingFile = (dataPath: string) => path.join(restoreDirOf(dataPath), 'pending.json')
const lastFile = (dataPath: string) => path.join(restoreDirOf(dataPath), 'last.json')
/** At the top of DATA_DIR: the factory reset removes everything else, this last. */
export const factoryResetMarker = (dataPath: string) => path.join(dataPath, 'factory-reset.json')

export interface PendingRestore {
  id: string
  stagedAt: number
  requestedBy: string | null
  backupCreatedAt: number
  backupSoftwareVersion: string
  migrationsRun: number
  /** The backed-up folders the backup holds. */
  folders: string[]
  /**
   * `staged` → `swapping` (the folders to swap are fixed) → `swapped` (the folders are in place)
   * → the database is replaced and the record removed. `failing`: the folders are being put back.
   */
  phase: 'staged' | 'swapping' | 'swapped' | 'failing'
  swapFolders?: string[]
}

export interface RestoreRecord {
  outcome: 'restored' | 'failed'
  reason: string | null
  at: number
  backupCreatedAt: number
  backupSoftwareVersion: string
  migrationsRun: number
  requestedBy: string | null
  /** When the running device emitted `restore.finished` for it. */
  reportedAt?: number
}

export interface FactoryResetRequest {
  requestedBy: string | null
  requestedAt: number
}

function readJson<T>(file: string): T | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T
  } catch {
    return null
  }
}

/** Written to a temporary file and renamed: a crash never leaves half a record. */
function writeJson(file: string, value: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true })
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, JSON.stringify(value, null, 2))
  renameSync(temporary, file)
}

export const readPendingRestore = (dataPath: string) => readJson<PendingRestore>(pendingFile(dataPath))
export const writePendingRestore = (dataPath: string, pending: PendingRestore) => writeJson(pendingFile(dataPath), pending)
export const removePendingRestore = (dataPath: string) => rmSync(pendingFile(dataPath), { force: true })
export const readLastRestore = (dataPath: string) => readJson<RestoreRecord>(lastFile(dataPath))
export const writeLastRestore = (dataPath: string, record: RestoreRecord) => writeJson(lastFile(dataPath), record)
export const readFactoryResetRequest = (dataPath: string) => readJson<FactoryResetRequest>(factoryResetMarker(dataPath))
export const writeFactoryResetRequest = (dataPath: string, request: FactoryResetRequest) => writeJson(factoryResetMarker(dataPath), request)
