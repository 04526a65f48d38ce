import { mkdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import type { Client } from '@libsql/client'
import { archiveFormat, extractTarGz, inspectTarGz, type ArchiveLimits, type ArchiveRules, type ArchiveViolation } from '../archive/safe-unpack.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { migrateDb } from '../db/client.ts'
import { decodeValue, deriveKeys, kdfProblem, manifestSignatureValid, type BackupKeys } from './codec.ts'
import { sha256File } from '../digest.ts'
import { PLAIN_NAME } from './files.ts'
import { boundedLines } from './lines.ts'
import { MANIFEST_ENTRY, MANIFEST_MAX_BYTES, SIGNATURE_ENTRY, parseManifest, tableEntry, type Manifest } from './manifest.ts'
import { EXCLUDED_ROWS, isBackedUpFolder, isSecretColumn, tableExclusion } from './policy.ts'
import { backedUpTables, type MigrationStep } from './schema.ts'
import { columnsOf, openAtLevel, tableNames, typeProblem, type ColumnInfo } from './scratch-db.ts'
import { requireSpace } from './write.ts'

/** Where a validated restore waits for the restart: `<dir>/archive` (the entries) and `<dir>/data.db` (the rows, at the device's schema). */
export const archiveDirOf = (dir: string) => path.join(dir, 'archive')
export const scratchDbOf = (dir: string) => path.join(dir, 'data.db')

export interface ValidateOptions {
  /** The uploaded archive. */
  file: string
  /** An empty folder of its own (DATA_DIR/restore/<id>); the caller removes it when this throws. */
  dir: string
  dataPath: string
  passphrase: string
  limits: ArchiveLimits
  migrationsDir: string
  /** The device's migrations (schema.ts migrationSteps). */
  migrations: MigrationStep[]
}

export interface ValidatedBackup {
  manifest: Manifest
  /** Migrations run forward on the backup's rows (0 when it was made at this device's schema). */
  migrationsRun: number
  /** The backed-up folders it holds. */
  folders: string[]
}

/** A row of a backup is at most this long (a face picture and descriptor are ~100 KB). */
const MAX_ROW_BYTES = 16 * 1024 * 1024
const rowInvalid = (details: Record<string, unknown>) => new ApiError('BackupRowInvalid', { details })

function refusal(violation: ArchiveViolation): ApiError {
  switch (violation.kind) {
    case 'too-many-entries': return new ApiError('BackupArchiveTooLarge', { details: { limitEntries: violation.limit } })
    case 'too-large': return new ApiError('BackupArchiveTooLarge', { details: { limitBytes: String(violation.limit), atLeastBytes: String(violation.atLeast) } })
    case 'corrupt': return new ApiError('BackupArchiveCorrupt', { details: { reason: violation.reason } })
    case 'unsafe-link': return new ApiError('BackupArchiveUnsafe', { details: { entry: violation.entry, reason: `a link (to ${violation.linkpath})` } })
    default: return new ApiError('BackupArchiveUnsafe', { details: { entry: violation.entry, reason: violation.reason } })
  }
}

/**
 * Checks a whole backup before anything of the device changes (docs/system.md "Backup, restore and
 * factory reset"): archive safety and limits, the manifest and its signature (the passphrase),
 * every entry against its checksum, the format and schema level, every row against its table
 * (in a scratch database at the backup's schema level, then migrated forward to this device's),
 * every column with a declared set of values or JSON. What passes is left in `dir`, ready to apply.
 */
export async function validateBackup(options: ValidateOptions): Promise<ValidatedBackup> {
  const { dir } = options
  if (await archiveFormat(options.file) !== 'tar.gz') throw new ApiError('BackupArchiveCorrupt', { details: { reason: 'not a gzip file' } })
  const rules: ArchiveRules = { limits: options.limits, links: 'refuse', refusal }
  const sizes = new Map<string, number>()
  const listing = await inspectTarGz(options.file, rules, (entry) => { if (entry.regular) sizes.set(entry.path, entry.size) })
  await requireSpace(options.dataPath, listing.expandedBytes * 2)
  const archive = archiveDirOf(dir)
  await mkdir(archive, { recursive: true })
  await extractTarGz(options.file, archive, listing, rules)

  const manifestBytes = await readEntry(archive, sizes, MANIFEST_ENTRY, MANIFEST_MAX_BYTES)
  const manifest = parseManifest(manifestBytes)
  const keys = await openManifest(manifest, manifestBytes, await readEntry(archive, sizes, SIGNATURE_ENTRY, 1024), options.passphrase)
  await checkEntries(archive, sizes, manifest)
  const level = schemaLevel(manifest.migrations, options.migrations)
  const folders = [...new Set(manifest.files.map((f) => f.path.split('/')[1]!))].sort()

  const scratch = await openAtLevel(scratchDbOf(dir), options.migrationsDir, level)
  try {
    const known = new Set(await tableNames(scratch.client))
    for (const table of manifest.tables) {
      if (!known.has(table.name) || tableExclusion(table.name)) throw rowInvalid({ table: table.name, reason: known.has(table.name) ? 'this table is never in a backup' : 'no such table at the backup\'s schema level' })
      const rows = await loadRows(scratch.client, path.join(archive, table.entry), table.name, await columnsOf(scratch.client, table.name), keys)
      if (rows !== table.rows) throw rowInvalid({ table: table.name, reason: `${rows} rows where the manifest says ${table.rows}` })
    }
    try {
      await migrateDb(scratch.db, options.migrationsDir)
    } catch (error) {
      throw rowInvalid({ reason: `migrating the backup's rows forward failed: ${(error as Error).message}` })
    }
    await checkDeclaredValues(scratch.client)
  } finally {
    scratch.close()
  }
  return { manifest, migrationsRun: options.migrations.length - level, folders }
}

async function readEntry(archive: string, sizes: Map<string, number>, entry: string, maxBytes: number): Promise<Buffer> {
  const size = sizes.get(entry)
  if (size === undefined) throw new ApiError('BackupManifestInvalid', { details: { reason: `the archive has no ${entry}` } })
  if (size > maxBytes) throw new ApiError('BackupManifestInvalid', { details: { reason: `${entry} is larger than ${maxBytes} bytes` } })
  return readFile(path.join(archive, entry))
}

/** The keys from the passphrase, once the manifest's signature proves them (and the manifest unaltered). */
async function openManifest(manifest: Manifest, bytes: Buffer, signature: Buffer, passphrase: string): Promise<BackupKeys> {
  const problem = kdfProblem(manifest.kdf)
  if (problem) throw new ApiError('BackupManifestInvalid', { details: { reason: problem } })
  const keys = await deriveKeys(passphrase, manifest.kdf)
  if (!manifestSignatureValid(bytes, signature.toString('utf8'), keys)) throw new ApiError('BackupAuthenticationFailed')
  return keys
}

/** Exactly the entries the manifest names, each of its size and SHA-256; each table and file where a backup puts it. */
async function checkEntries(archive: string, sizes: Map<string, number>, manifest: Manifest): Promise<void> {
  const listed = new Map<string, { bytes: number; sha256: string }>()
  for (const table of manifest.tables) {
    if (table.entry !== tableEntry(table.name)) throw new ApiError('BackupManifestInvalid', { details: { reason: `table ${table.name} must be in ${tableEntry(table.name)}` } })
    if (listed.has(table.entry)) throw new ApiError('BackupManifestInvalid', { details: { reason: `table ${table.name} is listed twice` } })
    listed.set(table.entry, table)
  }
  for (const file of manifest.files) {
    const [top, folder, ...rest] = file.path.split('/')
    if (top !== 'files' || !folder || !isBackedUpFolder(folder) || rest.length === 0 || !rest.every((part) => PLAIN_NAME.test(part)))
      throw new ApiError('BackupManifestInvalid', { details: { reason: `${file.path.slice(0, 300)} is not a file of a folder a backup holds` } })
    if (listed.has(file.path)) throw new ApiError('BackupManifestInvalid', { details: { reason: `${file.path.slice(0, 300)} is listed twice` } })
    listed.set(file.path, file)
  }
  for (const entry of sizes.keys()) {
    if (entry !== MANIFEST_ENTRY && entry !== SIGNATURE_ENTRY && !listed.has(entry)) throw new ApiError('BackupChecksumMismatch', { details: { entry, reason: 'not listed in the manifest' } })
  }
  for (const [entry, expected] of listed) {
    if (!sizes.has(entry)) throw new ApiError('BackupChecksumMismatch', { details: { entry, reason: 'missing from the archive' } })
    const file = path.join(archive, entry)
    if ((await stat(file)).size !== expected.bytes || await sha256File(file) !== expected.sha256)
      throw new ApiError('BackupChecksumMismatch', { details: { entry, reason: 'its bytes differ from the manifest\'s checksum' } })
  }
}

/** How many of the device's migrations the backup's database had: its migrations must be the first ones of the device's, in order. */
function schemaLevel(backup: MigrationStep[], device: MigrationStep[]): number {
  for (const [index, step] of backup.entries()) {
    const ours = device[index]
    if (!ours || ours.tag !== step.tag || ours.hash !== step.hash) {
      throw new ApiError('BackupSchemaNewer', { details: { migration: step.tag.slice(0, 256), backupMigrations: backup.length, deviceMigrations: device.length } })
    }
  }
  return backup.length
}

/** Inserts the rows of one table (its own transaction in the scratch database); answers how many. */
async function loadRows(client: Client, file: string, table: string, columns: ColumnInfo[], keys: BackupKeys): Promise<number> {
  const byName = new Map(columns.map((c) => [c.name, c]))
  const excluded = EXCLUDED_ROWS.filter((rule) => rule.table === table)
  const tx = await client.transaction('write')
  let line = 0
  try {
    await tx.execute('PRAGMA defer_foreign_keys = ON')
    for await (const text of boundedLines(file, MAX_ROW_BYTES)) {
      line++
      const fail = (reason: string, column?: string) => rowInvalid({ table, line, ...(column ? { column: column.slice(0, 128) } : {}), reason })
      let row: unknown
      try {
        row = JSON.parse(text)
      } catch {
        throw fail('not JSON')
      }
      if (typeof row !== 'object' || row === null || Array.isArray(row)) throw fail('a row must be a JSON object')
      const excludedBy = excluded.find((rule) => rule.values.includes(String((row as Record<string, unknown>)[rule.column])))
      if (excludedBy) throw fail('a row the device never restores', excludedBy.column)
      const names = Object.keys(row)
      const values = names.map((name) => {
        const column = byName.get(name)
        if (!column) throw fail('no such column at the backup\'s schema level', name)
        let value
        try {
          value = decodeValue((row as Record<string, unknown>)[name], isSecretColumn(table, name) ? { keys, table, column: name } : null)
        } catch (error) {
          throw fail((error as Error).message, name)
        }
        const problem = typeProblem(value, column.type)
        if (problem) throw fail(problem, name)
        return value
      })
      const quoted = names.map((n) => `"${n.replaceAll('"', '""')}"`).join(', ')
      try {
        await tx.execute({ sql: `INSERT INTO "${table}" (${quoted}) VALUES (${names.map(() => '?').join(', ')})`, args: values })
      } catch (error) {
        throw fail((error as Error).message)
      }
    }
    try {
      await tx.commit()
    } catch (error) {
      throw rowInvalid({ table, reason: (error as Error).message })
    }
  } catch (error) {
    if (error instanceof ApiError) throw error
    throw rowInvalid({ table, line, reason: (error as Error).message })
  } finally {
    tx.close()
  }
  return line
}

/** What SQL does not check but the schema declares: a column's set of values, and JSON text. */
async function checkDeclaredValues(client: Client): Promise<void> {
  for (const table of backedUpTables()) {
    for (const column of table.columns) {
      const name = `"${column.name}"`
      const checks: [string, unknown[], string][] = []
      if (column.enumValues) checks.push([`${name} NOT IN (${column.enumValues.map(() => '?').join(', ')})`, column.enumValues, `must be one of ${column.enumValues.join(', ')}`])
      if (column.json) checks.push([`json_valid(${name}) = 0`, [], 'must be JSON'])
      for (const [where, args, reason] of checks) {
        const bad = await client.execute({ sql: `SELECT count(*) AS n FROM "${table.name}" WHERE ${name} IS NOT NULL AND ${where}`, args: args as string[] })
        if (Number(bad.rows[0]!.n) > 0) throw rowInvalid({ table: table.name, column: column.name, reason })
      }
    }
  }
}
