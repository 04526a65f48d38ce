import type { Identity } from '../handler.ts'

/**
 * The upgrade record, a JSON file under `<DATA_DIR>/upgrade/` (runtime/upgrade/state.ts; not the
 * database: the supervisor reads it before any version of the runtime, and its schema, is running).
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

/**
 * The supervisor's install journal, `<DATA_DIR>/upgrade/journal.json` (runtime/upgrade/journal.ts; docs/system.md
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

/** What `ctx.upgrade.stage` answers of the pending upgrade: the version staged, the one it replaces, when, by whom. */
export type StagedUpgrade = Pick<PendingUpgrade, 'version' | 'fromVersion' | 'stagedAt' | 'requestedBy'>

/**
 * `ctx.upgrade`: the software upgrade of spec 4.11 as the running device sees it
 * (docs/system.md "Software upgrade"). Staging is the device's; the install, the probation and
 * the rollback are the supervisor's, at the next start. Implemented by runtime/upgrade/service.ts.
 */
export interface UpgradeService {
  /**
   * Consumes a complete upload of purpose `upgrade`, validates the package (name, MD5, archive
   * safety, layout), stages it, emits `upgrade.staged` and asks the supervisor for the restart
   * into it. Refused before the upload is consumed when the device runs without the supervisor
   * (UpgradeNotSupervised) or an upgrade is already pending (UpgradeInProgress).
   */
  stage(identity: Identity, uploadId: string): Promise<StagedUpgrade>
  /** The upgrade record: current and previous release, the pending upgrade, the history. */
  state(): UpgradeState
  /** The supervisor's install journal (a version on probation), or null. */
  journal(): UpgradeJournal | null
}
