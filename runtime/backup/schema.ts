import { readFileSync } from 'node:fs'
import path from 'node:path'
import { is } from 'drizzle-orm'
import { readMigrationFiles } from 'drizzle-orm/migrator'
import { getTableConfig, SQLiteTable } from 'drizzle-orm/sqlite-core'
import { schema } from '../db/client.ts'
import { tableExclusion, type TableExclusion } from './policy.ts'

/** A table of the drizzle schema as a backup sees it: SQL names, and what its columns promise beyond SQL. */
export interface SchemaTable {
  name: string
  columns: { name: string; enumValues: string[] | null; json: boolean }[]
  exclusion: TableExclusion | null
}

/** Every table of the drizzle schema (shared/db/schema), so a table another area adds is included by itself. */
export function schemaTables(): SchemaTable[] {
  return Object.values(schema).filter((value) => is(value, SQLiteTable)).map((table) => {
    const config = getTableConfig(table as SQLiteTable)
    return {
      name: config.name,
      columns: config.columns.map((c) => ({
        name: c.name,
        enumValues: c.enumValues && c.enumValues.length > 0 ? [...c.enumValues] : null,
        json: c.columnType === 'SQLiteTextJson' || c.columnType === 'SQLiteBlobJson',
      })),
      exclusion: tableExclusion(config.name),
    }
  }).sort((a, b) => a.name.localeCompare(b.name))
}

/** The tables a backup holds and a restore replaces. */
export const backedUpTables = (): SchemaTable[] => schemaTables().filter((t) => !t.exclusion)

/** One migration of shared/db/migrations: its tag and drizzle's hash of its SQL. */
export interface MigrationStep {
  tag: string
  hash: string
}

/**
 * The migrations of a folder, in order: the schema level of a database migrated with them.
 * A backup records the level of the device that made it; a restore migrates older data forward.
 */
export function migrationSteps(folder: string): MigrationStep[] {
  const journal = JSON.parse(readFileSync(path.join(folder, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string }[] }
  const hashes = readMigrationFiles({ migrationsFolder: folder }).map((m) => m.hash)
  return journal.entries.map((entry, index) => ({ tag: entry.tag, hash: hashes[index]! }))
}
