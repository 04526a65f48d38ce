import { lstat, mkdir, readdir, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { isBackedUpFolder } from './policy.ts'

/** Helpers for the folders of DATA_DIR a backup holds and a restore swaps. */

/** The folders at the top of `dir` that a backup holds (policy.ts). */
export async function backedUpFolders(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => [])
  return entries.filter((e) => e.isDirectory() && isBackedUpFolder(e.name)).map((e) => e.name).sort()
}

/** A plain name: what a backup writes and a restore accepts as a path component. */
export const PLAIN_NAME = /^[A-Za-z0-9_][A-Za-z0-9._ @+=,-]{0,254}$/

/**
 * Regular files under `dir`, relative, in a stable order. Links, devices and names that are not
 * plain are skipped (and reported): a backup carries files, never links.
 */
export async function regularFiles(dir: string, skipped: (file: string, why: string) => void, prefix = ''): Promise<{ relative: string; size: number }[]> {
  const out: { relative: string; size: number }[] = []
  const names = (await readdir(path.join(dir, prefix)).catch(() => [] as string[])).sort()
  for (const name of names) {
    const relative = prefix ? `${prefix}/${name}` : name
    if (!PLAIN_NAME.test(name)) { skipped(relative, 'name'); continue }
    const stat = await lstat(path.join(dir, relative))
    if (stat.isDirectory()) out.push(...await regularFiles(dir, skipped, relative))
    else if (stat.isFile()) out.push({ relative, size: stat.size })
    else skipped(relative, stat.isSymbolicLink() ? 'link' : 'not a regular file')
  }
  return out
}

/**
 * Puts each staged folder in place of the live one, the live one moved aside into `aside`
 * (renames within DATA_DIR: each is atomic). Idempotent, so a swap cut short by a crash is
 * finished at the next start: a folder already swapped has no staged copy any more.
 */
export async function swapFolders(dataPath: string, staged: string, aside: string, folders: string[]): Promise<void> {
  await mkdir(aside, { recursive: true })
  for (const folder of folders) {
    const next = path.join(staged, folder)
    if (!await exists(next)) continue
    const live = path.join(dataPath, folder)
    if (await exists(live) && !await exists(path.join(aside, folder))) await rename(live, path.join(aside, folder))
    await rename(next, live)
  }
}

/** Undoes `swapFolders`: each live folder that came from the staging is removed and the old one put back. */
export async function unswapFolders(dataPath: string, staged: string, aside: string, folders: string[]): Promise<void> {
  for (const folder of folders) {
    const live = path.join(dataPath, folder)
    if (!await exists(path.join(staged, folder))) await rm(live, { recursive: true, force: true })
    if (await exists(path.join(aside, folder))) await rename(path.join(aside, folder), live)
  }
}

export const exists = (file: string) => lstat(file).then(() => true, () => false)
