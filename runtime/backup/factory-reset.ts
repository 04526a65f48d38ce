import { readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Config } from '../../shared/config.ts'
import { openDb } from '../db/client.ts'
import { FACTORY_RESET_KEEPS } from './policy.ts'
import { factoryResetMarker, readFactoryResetRequest, type FactoryResetRequest } from './records.ts'
import { schemaTables } from './schema.ts'

/** The database file of a `file:` URL, or null for a server (or memory). */
function databaseFile(url: string): string | null {
  if (!/^file:/i.test(url)) return null
  return url.startsWith('file://') ? fileURLToPath(url) : path.resolve(url.slice('file:'.length))
}

/**
 * Carries out a confirmed factory reset at start-up, before anything opens DATA_DIR (docs/system.md
 * "Backup, restore and factory reset"): the database goes (its file, or every row of a
 * database server), and every entry of DATA_DIR but the software (policy.ts FACTORY_RESET_KEEPS);
 * the marker goes last, so a reset cut short by a crash is finished at the next start. The
 * device then starts as new: the default account with its first password. Answers the request,
 * or null when none was confirmed.
 */
export async function runPendingFactoryReset(config: Config): Promise<FactoryResetRequest | null> {
  const marker = factoryResetMarker(config.dataPath)
  const request = readFactoryResetRequest(config.dataPath)
  if (!request) return null
  const file = databaseFile(config.databaseUrl)
  if (file) {
    for (const suffix of ['', '-wal', '-shm', '-journal']) await rm(`${file}${suffix}`, { force: true })
  } else if (config.databaseUrl !== ':memory:') {
    await emptyDatabase(config)
  }
  for (const name of await readdir(config.dataPath).catch(() => [] as string[])) {
    if (FACTORY_RESET_KEEPS.includes(name) || path.join(config.dataPath, name) === marker) continue
    await rm(path.join(config.dataPath, name), { recursive: true, force: true })
  }
  await rm(marker, { force: true })
  return request
}

/** A database server is shared state the device cannot delete: every row of its tables goes instead, in one transaction. */
async function emptyDatabase(config: Config): Promise<void> {
  const database = openDb(config.databaseUrl, config.libsqlAuthToken || undefined)
  try {
    await database.client.batch(['PRAGMA defer_foreign_keys = ON', ...schemaTables().map((t) => `DELETE FROM "${t.name}"`)], 'write')
  } finally {
    database.close()
  }
}
