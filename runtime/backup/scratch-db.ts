import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Client } from '@libsql/client'
import { migrateDb, openDb, type OpenDb } from '../db/client.ts'

/**
 * The restore's scratch database: created at the schema level the backup was made at (its
 * migrations, and no more), filled with the backup's rows, then migrated forward with the
 * device's own migrations. SQLite itself then checks every row against its table (columns,
 * NOT NULL, keys, vector sizes), at the level the rows were written for.
 */

export interface ColumnInfo {
  name: string
  type: string
  notnull: boolean
  hasDefault: boolean
}

/** SQLite's, drizzle's and libsql's own tables (vector index shadows): never rows of a backup. */
export const isInternalTable = (name: string) => /^(sqlite_|__drizzle|libsql_)|_shadow$/.test(name)

/** A new database file migrated with the first `level` migrations of `migrationsDir`. */
export async function openAtLevel(file: string, migrationsDir: string, level: number): Promise<OpenDb> {
  const folder = `${file}.migrations`
  const journal = JSON.parse(await readFile(path.join(migrationsDir, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string }[] }
  const entries = journal.entries.slice(0, level)
  await mkdir(path.join(folder, 'meta'), { recursive: true })
  await writeFile(path.join(folder, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries }))
  for (const entry of entries) await copyFile(path.join(migrationsDir, `${entry.tag}.sql`), path.join(folder, `${entry.tag}.sql`))
  const database = openDb(`file:${file}`)
  try {
    await migrateDb(database.db, folder)
    return database
  } catch (error) {
    database.close()
    throw error
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
}

export async function tableNames(client: Client): Promise<string[]> {
  const result = await client.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
  return result.rows.map((r) => String(r.name)).filter((name) => !isInternalTable(name))
}

export async function columnsOf(client: Client, table: string): Promise<ColumnInfo[]> {
  const result = await client.execute({ sql: 'SELECT name, type, "notnull", dflt_value FROM pragma_table_info(?)', args: [table] })
  return result.rows.map((r) => ({ name: String(r.name), type: String(r.type), notnull: Number(r.notnull) === 1, hasDefault: r.dflt_value !== null }))
}

/** SQLite's type affinity of a declared column type (https://www.sqlite.org/datatype3.html 3.1). */
export function affinity(type: string): 'integer' | 'text' | 'blob' | 'real' | 'numeric' {
  const t = type.toUpperCase()
  if (t.includes('INT')) return 'integer'
  if (/CHAR|CLOB|TEXT/.test(t)) return 'text'
  if (t.includes('BLOB') || t === '') return 'blob'
  if (/REAL|FLOA|DOUB/.test(t)) return 'real'
  return 'numeric'
}

/** Why a value does not fit a column of this affinity, or null. */
export function typeProblem(value: unknown, type: string): string | null {
  if (value === null) return null
  const kind = value instanceof Uint8Array ? 'blob' : typeof value
  const allowed = { integer: ['number', 'bigint'], real: ['number'], text: ['string'], blob: ['blob'], numeric: ['number', 'bigint', 'string'] }[affinity(type)]
  if (!allowed.includes(kind)) return `a ${kind} value in a ${type} column`
  return null
}
