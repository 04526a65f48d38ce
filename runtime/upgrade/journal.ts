import { existsSync, readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import { syncPath, writeFileDurable } from './durable.ts'
import { upgradeDir } from './state.ts'
import type { UpgradeJournal } from '../../shared/upgrade/types.ts'

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
