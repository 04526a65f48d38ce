import type { EventsService } from '../../shared/events/types.ts'
import type { Logger } from '../../shared/handler.ts'
import { readUpgradeState, writeUpgradeState } from '../upgrade/state.ts'

/**
 * At start, emits `upgrade.finished` for every upgrade outcome the supervisor recorded that
 * no running device has reported yet, then marks them reported. (The supervisor writes the
 * record only while no device runs, so the two never write it at once.)
 */
export async function reportUpgradeOutcomes(dataPath: string, events: EventsService, softwareVersion: string, now: number, log: Logger) {
  const state = readUpgradeState(dataPath)
  const unreported = state.history.filter((entry) => entry.reportedAt === undefined)
  if (unreported.length === 0) return
  for (const entry of unreported) {
    await events.emit('upgrade.finished', { version: entry.version, fromVersion: entry.fromVersion, outcome: entry.outcome, reason: entry.reason, softwareVersion })
    log.info({ version: entry.version, outcome: entry.outcome }, 'upgrade outcome reported')
  }
  writeUpgradeState(dataPath, { ...state, history: state.history.map((entry) => entry.reportedAt === undefined ? { ...entry, reportedAt: now } : entry) })
}
