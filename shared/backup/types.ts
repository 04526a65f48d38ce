import type { Identity } from '../handler.ts'

/** The upload purpose of a backup to restore (spec 4.12). */
export const BACKUP_UPLOAD_PURPOSE = 'backup'

/**
 * Backup, restore and factory reset (`ctx.backup`, spec 4.10 System; docs/system.md "Backup, restore
 * and factory reset"). Implementation in `runtime/backup/`. Byte counts and times are decimal
 * strings (spec 8).
 */
export interface BackupService {
  /** Produces a backup (replacing the one kept before) and keeps it BACKUP_RETENTION_MS for its download. */
  create(passphrase: string, identity: Identity): Promise<BackupInfo>
  /** The kept backup as a ranged attachment (spec 4.11); BackupNotFound when it is gone. */
  download(backupId: string, request: Request | null): Promise<Response>
  /**
   * Validates an uploaded backup whole (purpose `backup`), stages it and restarts the device to
   * apply it; a refusal changes nothing (the upload stays complete and can be used again).
   */
  restore(uploadId: string, passphrase: string, identity: Identity): Promise<RestoreStaged>
  status(): Promise<BackupStatus>
  /** Step 1 of a factory reset: a confirmation token for this session. */
  requestFactoryReset(identity: Identity): FactoryResetChallenge
  /** Step 2: with the token of step 1, the device restarts and removes everything but the software. */
  factoryReset(confirmationToken: string, identity: Identity): Promise<{ resetting: true }>
}

export interface BackupInfo {
  backupId: string
  fileName: string
  sizeBytes: string
  sha256: string
  createdAt: string
  expiresAt: string
  formatVersion: number
  softwareVersion: string
  /** Rows per table. */
  tables: Record<string, number>
  files: number
}

export interface RestoreStaged {
  restarting: true
  backup: { createdAt: string; softwareVersion: string; formatVersion: number }
  /** Database migrations the device runs forward on the backup's rows (0: made at this schema). */
  migrationsRun: number
  tables: Record<string, number>
  files: number
}

export interface BackupStatus {
  /** The backup kept for download, if any. */
  backup: BackupInfo | null
  /** A restore staged and waiting for the restart. */
  pending: { stagedAt: string; backupCreatedAt: string; requestedBy: string | null } | null
  /** The last restore the device applied or failed to apply at a start. */
  last: { outcome: 'restored' | 'failed'; reason: string | null; at: string; backupCreatedAt: string; backupSoftwareVersion: string; migrationsRun: number; requestedBy: string | null } | null
}

export interface FactoryResetChallenge {
  confirmationToken: string
  expiresAt: string
  expiresInSeconds: number
}
