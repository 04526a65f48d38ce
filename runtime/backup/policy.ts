/**
 * What a backup holds, as data (docs/system.md "Backup, restore and factory reset"). A backup is
 * generic over the schema: every table of the drizzle schema and every folder of DATA_DIR is
 * in it, except what is named here. A table or folder another area adds is therefore backed
 * up and restored without a change here; one that holds run-time state must be added below.
 */

/** How a restore treats a table that is not in backups. */
export type RestorePolicy =
  /** Left as the device has it (history and transfers belong to the device, not to its settings). */
  | 'keep'
  /** Emptied: the restored accounts replace the old ones, so their sign-ins end. */
  | 'clear'

export interface TableExclusion {
  /** Table names this rule covers. */
  match: RegExp
  why: string
  onRestore: RestorePolicy
}

export const EXCLUDED_TABLES: TableExclusion[] = [
  { match: /^sessions$/, why: 'sign-in sessions (tokens): every client signs in again with the restored accounts', onRestore: 'clear' },
  { match: /^login_throttle$/, why: 'sign-in throttle of this device (blocks of client addresses)', onRestore: 'keep' },
  { match: /^(events|event_cursors|webhook_dead_letters)$/, why: 'the event outbox and its delivery state (history, not settings)', onRestore: 'keep' },
  { match: /^(upload_sessions|upload_chunks)$/, why: 'uploads in flight (the restore\'s own upload among them)', onRestore: 'keep' },
  // Each camera's recording mode (recording_cameras) is a setting and is backed up.
  { match: /^recording_clip(s|_events)$/, why: 'recorded clips and the events each belongs to (their files are never in a backup)', onRestore: 'keep' },
]

/**
 * Rows of a backed-up table that are state of the host, not of the device: a network change
 * waiting for its confirmation (restored elsewhere, it would roll back the host's network to
 * a configuration of another time). Left as the device has them.
 */
export const EXCLUDED_ROWS: { table: string; column: string; values: string[]; why: string }[] = [
  { table: 'system_settings', column: 'key', values: ['network.pendingChange', 'network.lastChange'], why: 'a network change of the host under confirm-or-rollback' },
]

/**
 * Columns whose values are encrypted in the archive with a key derived from the backup's
 * passphrase: any column whose name says it holds a credential, and the whole value of the
 * settings table (its JSON carries the MQTT password and the webhook secret).
 */
export const SECRET_COLUMN_NAME = /password|secret|token|credential|private_key/i
export const SECRET_COLUMNS: Record<string, string[]> = { system_settings: ['value'] }

/**
 * Folders of DATA_DIR that are not in a backup (every other folder is: algorithm packages and
 * layouts, user models, file cameras' videos, ...). Files at the top of DATA_DIR (the
 * database) never are.
 */
export const EXCLUDED_FOLDERS: Record<string, string> = {
  logs: 'log files',
  tmp: 'scratch files of exports',
  uploads: 'uploads in flight',
  'upload-spool': 'uploads in flight',
  run: 'the inference sidecar\'s socket',
  pictures: 'fullPicture URLs (kept FULL_PICTURE_RETENTION_MS)',
  overview: 'the latest annotated picture of each task',
  imports: 'face imports in progress',
  import: 'files an operator drops for a model import',
  algorithms: 'folders an operator drops for LoadLocalAlgorithmAction',
  upgrade: 'the software: upgrade state and packages',
  releases: 'the software: installed releases',
  backup: 'produced backups',
  restore: 'staged restores',
  recordings: 'recordings are never in a backup',
  alarms: 'alarm snapshots (history like the events they belong to)',
}

/** What a factory reset keeps in DATA_DIR: the software and its install record, nothing else. */
export const FACTORY_RESET_KEEPS = ['releases', 'upgrade']

export const tableExclusion = (table: string): TableExclusion | null => EXCLUDED_TABLES.find((rule) => rule.match.test(table)) ?? null

export const isSecretColumn = (table: string, column: string): boolean =>
  SECRET_COLUMN_NAME.test(column) || (SECRET_COLUMNS[table]?.includes(column) ?? false)

/** A folder name of DATA_DIR that a backup holds: not excluded, not hidden, a plain name. */
export const isBackedUpFolder = (name: string): boolean =>
  !Object.hasOwn(EXCLUDED_FOLDERS, name) && /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name)
