import { readdir, rm } from 'node:fs/promises'
import path from 'node:path'

/**
 * Spool files of `uploadTemp` (shared/uploads/multipart.ts): a file part that arrives before
 * the fields it needs is kept here until they are known, and deleted when its request ends.
 */
export const spoolDirOf = (dataPath: string): string => path.join(dataPath, 'upload-spool')

export const SPOOL_FILE_PREFIX = 'spool-'

/**
 * Deletes the spool files a process killed mid-request left behind. Call at start-up, before
 * requests are served: one runtime owns a data folder at a time (the supervisor starts the
 * next one only after the previous exited), so no spool file is in use then.
 */
export async function removeOrphanSpoolFiles(spoolDir: string): Promise<number> {
  const names = await readdir(spoolDir).catch(() => [] as string[])
  const orphans = names.filter((name) => name.startsWith(SPOOL_FILE_PREFIX))
  await Promise.all(orphans.map((name) => rm(path.join(spoolDir, name), { force: true })))
  return orphans.length
}
