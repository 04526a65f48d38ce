import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Client } from '@libsql/client'
import type { DeviceHost } from '../../shared/aihost/types.ts'
import { BACKUP_UPLOAD_PURPOSE, type BackupInfo, type BackupService, type BackupStatus, type FactoryResetChallenge, type RestoreStaged } from '../../shared/backup/types.ts'
import type { Config } from '../../shared/config.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { EventsService } from '../../shared/events/types.ts'
import type { Clock, Identity, Logger } from '../../shared/handler.ts'
import { rangedFileResponse } from '../../shared/http/ranged-file.ts'
import type { UploadService } from '../../shared/uploads/index.ts'
import { migrationsDir } from '../paths.ts'
import { ConfirmationTokens } from './confirmation.ts'
import { sha256File } from '../digest.ts'
import { FORMAT_VERSION } from './manifest.ts'
import {
  backupDirOf, factoryResetMarker, readLastRestore, readPendingRestore, restoreDirOf, writeFactoryResetRequest, writeLastRestore, writePendingRestore,
} from './records.ts'
import { backedUpTables, migrationSteps } from './schema.ts'
import { validateBackup } from './validate.ts'
import { writeBackup } from './write.ts'

export interface BackupServiceOptions {
  client: Client
  config: Config
  clock: Clock
  log: Logger
  events: EventsService
  uploads: UploadService
  device: DeviceHost
  softwareVersion: () => string
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const compactTime = (ms: number) => new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')
const owner = (identity: Identity) => `${identity.userId}/${identity.sessionId ?? identity.transport}`

/**
 * `ctx.backup` (shared/backup/types.ts). One backup or restore is prepared at a time; once a
 * restore or a factory reset is staged, the device only waits for its restart (through the
 * supervisor, which the server asks for with the restart exit code).
 */
export class RuntimeBackupService implements BackupService {
  readonly #o: BackupServiceOptions
  readonly #tokens: ConfirmationTokens
  #busy = false
  #staged = false
  #expiry: NodeJS.Timeout | null = null

  constructor(options: BackupServiceOptions) {
    this.#o = options
    this.#tokens = new ConfirmationTokens(options.clock)
  }

  get #dataPath() { return this.#o.config.dataPath }

  async create(passphrase: string, identity: Identity): Promise<BackupInfo> {
    return this.#exclusive(async () => {
      const { config, clock } = this.#o
      const backupId = randomUUID()
      const dir = backupDirOf(this.#dataPath)
      await mkdir(dir, { recursive: true })
      const createdAt = clock.now()
      const file = path.join(dir, `${backupId}.tar.gz`)
      const manifest = await writeBackup({
        client: this.#o.client, tables: backedUpTables().map((t) => t.name), migrations: migrationSteps(migrationsDir), dataPath: this.#dataPath,
        workDir: path.join(dir, `work-${backupId}`), target: file, passphrase, product: config.upgradeProduct,
        softwareVersion: this.#o.softwareVersion(), createdAt, createdBy: identity.accountName, log: this.#o.log,
      })
      const info: BackupInfo = {
        backupId, fileName: `${config.upgradeProduct}-backup-V${this.#o.softwareVersion()}-${compactTime(createdAt)}.tar.gz`,
        sizeBytes: String((await stat(file)).size), sha256: await sha256File(file), createdAt: String(createdAt),
        expiresAt: String(createdAt + config.backupRetentionMs), formatVersion: FORMAT_VERSION, softwareVersion: this.#o.softwareVersion(),
        tables: Object.fromEntries(manifest.tables.map((t) => [t.name, t.rows])), files: manifest.files.length,
      }
      await writeFile(path.join(dir, `${backupId}.json`), JSON.stringify(info))
      // One backup is kept: the newest.
      await this.#removeBackups((name) => !name.startsWith(backupId))
      this.#scheduleExpiry(config.backupRetentionMs)
      await this.#o.events.emit('backup.created', { backupId, sizeBytes: Number(info.sizeBytes), tables: manifest.tables.length, files: info.files, requestedBy: identity.accountName })
      return info
    })
  }

  async download(backupId: string, request: Request | null): Promise<Response> {
    const info = await this.#kept()
    if (!info || info.backupId !== backupId) throw new ApiError('BackupNotFound', { details: { backupId } })
    return rangedFileResponse(request, path.join(backupDirOf(this.#dataPath), `${backupId}.tar.gz`), { downloadName: info.fileName, contentType: 'application/gzip' })
  }

  async restore(uploadId: string, passphrase: string, identity: Identity): Promise<RestoreStaged> {
    this.#refuseUnsupervised()
    return this.#exclusive(async () => {
      const { config, clock } = this.#o
      // spec 3.1, 4.7: a refused backup leaves the upload complete, to be used again (another passphrase, say).
      const lease = await this.#o.uploads.lease(uploadId, identity, BACKUP_UPLOAD_PURPOSE)
      const id = randomUUID()
      const dir = path.join(restoreDirOf(this.#dataPath), id)
      let staged: RestoreStaged
      try {
        await mkdir(dir, { recursive: true })
        const { manifest, migrationsRun, folders } = await validateBackup({
          file: lease.path, dir, dataPath: this.#dataPath, passphrase, migrationsDir, migrations: migrationSteps(migrationsDir),
          limits: { maxEntries: config.backupMaxEntries, maxExpandedBytes: config.backupMaxExpandedBytes },
        })
        const tables = Object.fromEntries(manifest.tables.map((t) => [t.name, t.rows]))
        writePendingRestore(this.#dataPath, {
          id, stagedAt: clock.now(), requestedBy: identity.accountName, backupCreatedAt: manifest.createdAt, backupSoftwareVersion: manifest.softwareVersion,
          migrationsRun, folders, phase: 'staged',
        })
        staged = {
          restarting: true, backup: { createdAt: String(manifest.createdAt), softwareVersion: manifest.softwareVersion, formatVersion: manifest.formatVersion },
          migrationsRun, tables, files: manifest.files.length,
        }
      } catch (error) {
        await rm(dir, { recursive: true, force: true })
        await lease.abandon()
        throw error
      }
      this.#staged = true
      await lease.commit()
      const { backup } = staged
      await this.#o.events.emit('restore.staged', { backupCreatedAt: Number(backup.createdAt), backupSoftwareVersion: backup.softwareVersion, requestedBy: identity.accountName })
      this.#o.device.requestRestart(`restore of the backup of ${new Date(Number(backup.createdAt)).toISOString()}`)
      return staged
    })
  }

  async status(): Promise<BackupStatus> {
    const pending = readPendingRestore(this.#dataPath)
    const last = readLastRestore(this.#dataPath)
    return {
      backup: await this.#kept(),
      pending: pending && { stagedAt: String(pending.stagedAt), backupCreatedAt: String(pending.backupCreatedAt), requestedBy: pending.requestedBy },
      last: last && {
        outcome: last.outcome, reason: last.reason, at: String(last.at), backupCreatedAt: String(last.backupCreatedAt),
        backupSoftwareVersion: last.backupSoftwareVersion, migrationsRun: last.migrationsRun, requestedBy: last.requestedBy,
      },
    }
  }

  requestFactoryReset(identity: Identity): FactoryResetChallenge {
    this.#refuseUnsupervised()
    this.#refuseStaged()
    const ttl = this.#o.config.factoryResetTokenTtlMs
    const { token, expiresAt } = this.#tokens.issue(owner(identity), ttl)
    return { confirmationToken: token, expiresAt: String(expiresAt), expiresInSeconds: Math.floor(ttl / 1000) }
  }

  async factoryReset(confirmationToken: string, identity: Identity): Promise<{ resetting: true }> {
    this.#refuseUnsupervised()
    this.#refuseStaged()
    const taken = this.#tokens.take(confirmationToken, owner(identity))
    if (taken === 'invalid') throw new ApiError('FactoryResetTokenInvalid')
    if (taken === 'expired') throw new ApiError('FactoryResetTokenExpired', { details: { ttlMs: this.#o.config.factoryResetTokenTtlMs } })
    writeFactoryResetRequest(this.#dataPath, { requestedBy: identity.accountName, requestedAt: this.#o.clock.now() })
    this.#staged = true
    this.#o.log.warn({ requestedBy: identity.accountName }, 'factory reset confirmed; restarting')
    this.#o.device.requestRestart('factory reset')
    return { resetting: true }
  }

  /** At start: what a stopped process left (backups being written, validations), an expired backup, and the outcome of the restore just applied. */
  async start(): Promise<void> {
    const pending = readPendingRestore(this.#dataPath)
    for (const name of await readdir(restoreDirOf(this.#dataPath)).catch(() => [] as string[])) {
      if (!name.endsWith('.json') && name !== pending?.id) await rm(path.join(restoreDirOf(this.#dataPath), name), { recursive: true, force: true })
    }
    const kept = await this.#kept()
    await this.#removeBackups((name) => !kept || !name.startsWith(kept.backupId) || name.startsWith('work-'))
    if (kept) this.#scheduleExpiry(Number(kept.expiresAt) - this.#o.clock.now())
    const last = readLastRestore(this.#dataPath)
    if (last && last.reportedAt === undefined) {
      const { outcome, reason, backupCreatedAt, backupSoftwareVersion, migrationsRun } = last
      await this.#o.events.emit('restore.finished', { outcome, reason, backupCreatedAt, backupSoftwareVersion, migrationsRun })
      writeLastRestore(this.#dataPath, { ...last, reportedAt: this.#o.clock.now() })
    }
  }

  stop(): void {
    if (this.#expiry) clearTimeout(this.#expiry)
  }

  async #exclusive<T>(work: () => Promise<T>): Promise<T> {
    this.#refuseStaged()
    if (this.#busy) throw new ApiError('BackupBusy')
    this.#busy = true
    try {
      return await work()
    } finally {
      this.#busy = false
    }
  }

  #refuseUnsupervised(): void {
    if (!this.#o.device.supervised) throw new ApiError('RestartNotSupervised', { details: { start: 'npm start' } })
  }

  #refuseStaged(): void {
    if (this.#staged || readPendingRestore(this.#dataPath) || existsSync(factoryResetMarker(this.#dataPath))) throw new ApiError('SystemChangePending')
  }

  /** The backup kept for download, while it has not expired. */
  async #kept(): Promise<BackupInfo | null> {
    const dir = backupDirOf(this.#dataPath)
    const name = (await readdir(dir).catch(() => [] as string[])).find((n) => n.endsWith('.json') && UUID.test(n.slice(0, -5)))
    if (!name) return null
    try {
      const info = JSON.parse(await readFile(path.join(dir, name), 'utf8')) as BackupInfo
      return Number(info.expiresAt) > this.#o.clock.now() && existsSync(path.join(dir, `${info.backupId}.tar.gz`)) ? info : null
    } catch {
      return null
    }
  }

  async #removeBackups(remove: (name: string) => boolean): Promise<void> {
    const dir = backupDirOf(this.#dataPath)
    for (const name of await readdir(dir).catch(() => [] as string[])) if (remove(name)) await rm(path.join(dir, name), { recursive: true, force: true })
  }

  #scheduleExpiry(inMs: number): void {
    if (this.#expiry) clearTimeout(this.#expiry)
    this.#expiry = setTimeout(() => {
      if (this.#busy) return // the backup being written replaces it anyway
      this.#kept().then((kept) => (kept ? undefined : this.#removeBackups(() => true))).catch((error) => this.#o.log.warn({ err: error }, 'expired backup not removed'))
    }, Math.min(2 ** 31 - 1, Math.max(0, inMs) + 1000)).unref()
  }
}
