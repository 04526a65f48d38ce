import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import type { Client, InValue } from '@libsql/client'
import type { Config } from '../../shared/config.ts'
import { embeddedTuning, migrateDb, openDb } from '../db/client.ts'
import type { Logger } from '../../shared/handler.ts'
import { migrationsDir } from '../paths.ts'
import { backedUpFolders, swapFolders, unswapFolders } from './files.ts'
import { EXCLUDED_ROWS } from './policy.ts'
import {
  readPendingRestore, removePendingRestore, restoreDirOf, writeLastRestore, writePendingRestore, type RestoreRecord,
} from './records.ts'
import { schemaTables } from './schema.ts'
import { columnsOf } from './scratch-db.ts'
import { archiveDirOf, scratchDbOf } from './validate.ts'

const PAGE_ROWS = 256
const quote = (name: string) => `"${name.replaceAll('"', '""')}"`

/**
 * Applies a staged restore at start-up, before any service reads the database or DATA_DIR
 * (docs/system.md "Backup, restore and factory reset"): the backed-up folders are swapped with the
 * staged ones (renames), then every backed-up table is replaced in one transaction. On a
 * failure the transaction rolls back and the old folders go back: the device starts as it was.
 * A start cut short by a crash continues where the record says (each step is repeatable).
 * Answers the outcome, or null when no restore was staged.
 */
export async function applyPendingRestore(config: Config, log: Logger): Promise<RestoreRecord | null> {
  const pending = readPendingRestore(config.dataPath)
  if (!pending) return null
  const dir = path.join(restoreDirOf(config.dataPath), pending.id)
  const staged = path.join(archiveDirOf(dir), 'files')
  const aside = path.join(dir, 'previous')
  const record = (outcome: RestoreRecord['outcome'], reason: string | null): RestoreRecord => ({
    outcome, reason, at: Date.now(), backupCreatedAt: pending.backupCreatedAt, backupSoftwareVersion: pending.backupSoftwareVersion,
    migrationsRun: pending.migrationsRun, requestedBy: pending.requestedBy,
  })
  let outcome: RestoreRecord
  if (pending.phase === 'failing') {
    await unswapFolders(config.dataPath, staged, aside, pending.swapFolders ?? [])
    outcome = record('failed', 'the device stopped while it put the previous data back')
  } else {
    const live = openDb(config.databaseUrl, config.libsqlAuthToken || undefined, { connectionSetup: embeddedTuning(config.dbSynchronous) })
    let folders = pending.swapFolders
    try {
      await migrateDb(live.db, migrationsDir)
      if (!folders) {
        // Folders the device has and the backup does not are replaced by empty ones.
        folders = [...new Set([...await backedUpFolders(config.dataPath), ...pending.folders])].sort()
        for (const folder of folders) await mkdir(path.join(staged, folder), { recursive: true })
        writePendingRestore(config.dataPath, { ...pending, phase: 'swapping', swapFolders: folders })
      }
      await swapFolders(config.dataPath, staged, aside, folders)
      writePendingRestore(config.dataPath, { ...pending, phase: 'swapped', swapFolders: folders })
      await replaceTables(scratchDbOf(dir), live.client)
      outcome = record('restored', null)
      log.warn({ backupCreatedAt: pending.backupCreatedAt, migrationsRun: pending.migrationsRun }, 'restore applied')
    } catch (error) {
      const reason = (error as Error).message ?? String(error)
      log.error({ err: error }, 'restore could not be applied; the previous data stays')
      if (folders) {
        writePendingRestore(config.dataPath, { ...pending, phase: 'failing', swapFolders: folders })
        await unswapFolders(config.dataPath, staged, aside, folders)
      }
      outcome = record('failed', reason)
    } finally {
      live.close()
    }
  }
  writeLastRestore(config.dataPath, outcome)
  await rm(dir, { recursive: true, force: true })
  removePendingRestore(config.dataPath)
  return outcome
}

/**
 * One transaction on the live database: each backed-up table emptied (but the rows policy.ts
 * keeps) and filled from the validated scratch database; tables whose policy is `clear`
 * emptied; the others untouched. Foreign keys are checked at the commit.
 */
async function replaceTables(scratchFile: string, live: Client): Promise<void> {
  const scratch = openDb(`file:${scratchFile}`)
  const tx = await live.transaction('write')
  try {
    await tx.execute('PRAGMA defer_foreign_keys = ON')
    for (const table of schemaTables()) {
      if (table.exclusion) {
        if (table.exclusion.onRestore === 'clear') await tx.execute(`DELETE FROM ${quote(table.name)}`)
        continue
      }
      // libsql's vector index refuses a row id deleted and inserted again in one transaction
      // ("failed to insert shadow row"): such an index is dropped and built again from the new rows.
      const vectorIndexes = (await tx.execute({ sql: "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql LIKE '%libsql_vector_idx%'", args: [table.name] })).rows
      for (const index of vectorIndexes) await tx.execute(`DROP INDEX ${quote(String(index.name))}`)
      const kept = EXCLUDED_ROWS.filter((rule) => rule.table === table.name)
      const where = kept.map((rule) => `${quote(rule.column)} IN (${rule.values.map(() => '?').join(', ')})`).join(' OR ')
      await tx.execute({ sql: `DELETE FROM ${quote(table.name)}${where ? ` WHERE NOT (${where})` : ''}`, args: kept.flatMap((rule) => rule.values) })
      const columns = (await columnsOf(scratch.client, table.name)).map((c) => quote(c.name))
      const insert = `INSERT INTO ${quote(table.name)} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`
      for (let after = Number.MIN_SAFE_INTEGER; ;) {
        const page = await scratch.client.execute({ sql: `SELECT rowid AS __restore_rowid, ${columns.join(', ')} FROM ${quote(table.name)} WHERE rowid > ? ORDER BY rowid LIMIT ${PAGE_ROWS}`, args: [after] })
        for (const row of page.rows) {
          after = Number(row.__restore_rowid)
          await tx.execute({ sql: insert, args: Array.from({ length: columns.length }, (_, i) => row[i + 1] as InValue) })
        }
        if (page.rows.length < PAGE_ROWS) break
      }
      for (const index of vectorIndexes) await tx.execute(String(index.sql))
    }
    await tx.commit()
  } finally {
    tx.close()
    scratch.close()
  }
}
