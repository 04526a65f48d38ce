import { createHash } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { copyFile, link, mkdir, rm, statfs, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { finished } from 'node:stream/promises'
import type { Client } from '@libsql/client'
import { create } from 'tar'
import { ApiError } from '../../shared/errors/index.ts'
import type { Logger } from '../../shared/handler.ts'
import { deriveKeys, encodeValue, newKdfParams, signManifest, type SqlValue } from './codec.ts'
import { sha256File } from '../digest.ts'
import { backedUpFolders, regularFiles } from './files.ts'
import { BACKUP_FORMAT, FORMAT_VERSION, MANIFEST_ENTRY, SIGNATURE_ENTRY, tableEntry, type Manifest } from './manifest.ts'
import { EXCLUDED_ROWS, isSecretColumn } from './policy.ts'
import type { MigrationStep } from './schema.ts'

export interface WriteOptions {
  /** The live database (raw SQL: values as SQLite holds them, column names as in SQL). */
  client: Client
  tables: string[]
  migrations: MigrationStep[]
  dataPath: string
  /** A folder of its own for the archive's entries (removed afterwards), inside DATA_DIR. */
  workDir: string
  /** Where the archive is written. */
  target: string
  passphrase: string
  product: string
  softwareVersion: string
  createdAt: number
  createdBy: string | null
  log: Logger
}

const PAGE_ROWS = 256
const ROWID = '__backup_rowid'
const quote = (name: string) => `"${name.replaceAll('"', '""')}"`
/** Hard links are how the data files reach the archive; node-tar would turn a second link to one file into a link entry, which a restore refuses. */
const NO_LINK_ENTRIES = { get: () => undefined, set: () => undefined } as unknown as Map<`${number}:${number}`, string>

/**
 * Writes a backup archive (manifest.ts): the rows of `tables` read in one read transaction (a
 * consistent snapshot), the backed-up folders of DATA_DIR (hard-linked into the work folder),
 * the signed manifest; then one tar.gz. Returns the manifest.
 */
export async function writeBackup(options: WriteOptions): Promise<Manifest> {
  const { workDir } = options
  await mkdir(path.join(workDir, 'db'), { recursive: true })
  try {
    const kdf = newKdfParams()
    const keys = await deriveKeys(options.passphrase, kdf)
    const tables = await dumpTables(options, (table, column) => (isSecretColumn(table, column) ? { keys, table, column } : null))
    const files = await linkFolders(options)
    const needed = [...tables, ...files].reduce((sum, e) => sum + e.bytes, 0)
    await requireSpace(options.dataPath, needed)
    const manifest: Manifest = {
      format: BACKUP_FORMAT, formatVersion: FORMAT_VERSION, product: options.product, softwareVersion: options.softwareVersion,
      createdAt: options.createdAt, createdBy: options.createdBy, migrations: options.migrations,
      kdf: { name: 'scrypt', ...kdf }, tables, files,
    }
    const manifestBytes = Buffer.from(JSON.stringify(manifest, null, 1))
    await writeFile(path.join(workDir, MANIFEST_ENTRY), manifestBytes)
    await writeFile(path.join(workDir, SIGNATURE_ENTRY), `${signManifest(manifestBytes, keys)}\n`)
    const entries = [MANIFEST_ENTRY, SIGNATURE_ENTRY, 'db', ...(files.length > 0 ? ['files'] : [])]
    const out = createWriteStream(options.target, { flags: 'wx' })
    create({ gzip: true, cwd: workDir, portable: true, linkCache: NO_LINK_ENTRIES }, entries).pipe(out)
    await finished(out)
    return manifest
  } catch (error) {
    await rm(options.target, { force: true })
    throw (error as NodeJS.ErrnoException).code === 'ENOSPC' ? new ApiError('BackupNoSpace', { details: { reason: 'the disk filled up while the backup was written' } }) : error
  } finally {
    await rm(workDir, { recursive: true, force: true })
  }
}

type SecretOf = (table: string, column: string) => Parameters<typeof encodeValue>[1]

/** One JSON line per row, paged by rowid inside one read transaction. */
async function dumpTables(options: WriteOptions, secretOf: SecretOf): Promise<Manifest['tables']> {
  const out: Manifest['tables'] = []
  const tx = await options.client.transaction('read')
  try {
    for (const table of options.tables) {
      const excluded = EXCLUDED_ROWS.filter((rule) => rule.table === table)
      const entry = tableEntry(table)
      const stream = createWriteStream(path.join(options.workDir, entry), { flags: 'wx' })
      const hash = createHash('sha256')
      let rows = 0
      let bytes = 0
      let after = Number.MIN_SAFE_INTEGER
      for (;;) {
        const page = await tx.execute({ sql: `SELECT rowid AS ${ROWID}, * FROM ${quote(table)} WHERE rowid > ? ORDER BY rowid LIMIT ${PAGE_ROWS}`, args: [after] })
        for (const row of page.rows) {
          after = Number(row[ROWID])
          if (excluded.some((rule) => rule.values.includes(String(row[rule.column])))) continue
          const object: Record<string, unknown> = {}
          for (const column of page.columns) if (column !== ROWID) object[column] = encodeValue(row[column] as SqlValue, secretOf(table, column))
          const line = Buffer.from(`${JSON.stringify(object)}\n`)
          hash.update(line)
          bytes += line.length
          rows++
          if (!stream.write(line)) await new Promise<void>((resolve) => stream.once('drain', () => resolve()))
        }
        if (page.rows.length < PAGE_ROWS) break
      }
      stream.end()
      await finished(stream)
      out.push({ name: table, entry, rows, bytes, sha256: hash.digest('hex') })
    }
  } finally {
    tx.close()
  }
  return out
}

/** The backed-up folders of DATA_DIR under `files/`, hard-linked (copied across file systems), each file hashed. */
async function linkFolders(options: WriteOptions): Promise<Manifest['files']> {
  const out: Manifest['files'] = []
  for (const folder of await backedUpFolders(options.dataPath)) {
    const source = path.join(options.dataPath, folder)
    const files = await regularFiles(source, (file, why) => options.log.warn({ folder, file, why }, 'backup skips a file that is not a plain regular file'))
    for (const { relative, size } of files) {
      const entry = `files/${folder}/${relative}`
      const target = path.join(options.workDir, entry)
      await mkdir(path.dirname(target), { recursive: true })
      await link(path.join(source, relative), target).catch(() => copyFile(path.join(source, relative), target))
      out.push({ path: entry, bytes: size, sha256: await sha256File(target) })
    }
  }
  return out
}

/** The archive is at most about as large as what it holds (gzip adds a little to data it cannot shrink). */
export async function requireSpace(dir: string, bytes: number): Promise<void> {
  const required = Math.ceil(bytes * 1.01) + 1024 * 1024
  const stats = await statfs(dir)
  const available = stats.bavail * stats.bsize
  if (available < required) throw new ApiError('BackupNoSpace', { details: { requiredBytes: String(required), availableBytes: String(available) } })
}
