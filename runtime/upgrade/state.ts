import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import type { UpgradeState } from '../../shared/upgrade/types.ts'
import { writeFileDurable } from './durable.ts'

const HISTORY_LIMIT = 50

export const upgradeDir = (dataPath: string) => path.join(dataPath, 'upgrade')
export const releasesDir = (dataPath: string) => path.join(dataPath, 'releases')
const stateFile = (dataPath: string) => path.join(upgradeDir(dataPath), 'state.json')

/**
 * The upgrade record, a JSON file under `<DATA_DIR>/upgrade/` (not the database: the
 * supervisor reads it before any version of the runtime, and its schema, is running).
 */
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
