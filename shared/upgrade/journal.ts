import { existsSync, readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import { syncPath, writeFileDurable } from './durable.ts'
import { upgradeDir } from './state.ts'

/**
 * The supervisor's install journal, `<DATA_DIR>/upgrade/journal.json` (docs/system.md
 * "Rollback and power cuts"). Written only by the supervisor, flushed to disk before each step
 * it guards, read at every start: it tells a start after a power cut or kill what was under way.
 *
 * - `install`: the pending package is being verified, extracted and moved into releases/.
 * - `probation`: the new release is current but has not yet proved that it starts (ready and
 *   answering `Probe`); a start that finds this phase knows the last one never got there.
 */
export interface UpgradeJournal {
  version: string
  fromVersion: string
  phase: 'install' | 'probation'
  /** Starts of the install that never finished (a power cut or kill during it). */
  installAttempts: number
  /** Starts of the new version on probation so far, this one included. */
  probationStarts: number
  /** When the install began (ms since epoch). */
  startedAt: number
  /** When the package was staged (ms since epoch). */
  stagedAt: number
}

/** An install interrupted this many times is refused: the package, not bad luck, is the cause. */
export const MAX_INSTALL_ATTEMPTS = 3
/** The new version gets this many starts on probation; a power cut or kill in each one rolls it back. */
export const MAX_PROBATION_STARTS = 2

const journalFile = (dataPath: string) => path.join(upgradeDir(dataPath), 'journal.json')

export function readJournal(dataPath: string): UpgradeJournal | null {
  const file = journalFile(dataPath)
  if (!existsSync(file)) return null
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as UpgradeJournal
    return typeof value?.version === 'string' && (value.phase === 'install' || value.phase === 'probation') ? value : null
  } catch {
    // Written by rename after fsync, so never half a file; unreadable means damaged: start afresh.
    return null
  }
}

export function writeJournal(dataPath: string, journal: UpgradeJournal) {
  writeFileDurable(journalFile(dataPath), JSON.stringify(journal, null, 2))
}

export function clearJournal(dataPath: string) {
  const file = journalFile(dataPath)
  if (!existsSync(file)) return
  rmSync(file, { force: true })
  syncPath(path.dirname(file))
}
