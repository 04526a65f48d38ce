import { readdir, rm } from 'node:fs/promises'
import path from 'node:path'

/**
 * Deletes the files of `dir` whose name starts with `prefix` (none when the folder does not
 * exist) and says how many: at start-up, the scratch files a process killed mid-request left.
 */
export async function removeFilesStartingWith(dir: string, prefix: string): Promise<number> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((name) => name.startsWith(prefix))
  await Promise.all(names.map((name) => rm(path.join(dir, name), { force: true })))
  return names.length
}
