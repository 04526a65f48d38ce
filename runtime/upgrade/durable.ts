import { execFile } from 'node:child_process'
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeFileSync } from 'node:fs'
import { open, readdir } from 'node:fs/promises'
import path from 'node:path'

/**
 * Writes that survive a power cut (docs/system.md "Rollback and power cuts"): the content goes
 * to a temporary file that is flushed to disk, then renamed over the target, and the folder is
 * flushed so the rename itself is on disk. A reader sees the old file or the new one, never
 * half of one.
 */
export function writeFileDurable(file: string, content: string) {
  mkdirSync(path.dirname(file), { recursive: true })
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, content)
  syncPath(temporary)
  renameSync(temporary, file)
  syncPath(path.dirname(file))
}

/** fsync of a file or folder (a folder's fsync makes its entries — creations, renames — durable). */
export function syncPath(target: string) {
  const fd = openSync(target, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * Flushes everything written under `dir` to disk. One `syncfs` of the filesystem that holds it
 * (coreutils `sync -f`): a release has thousands of files (its node_modules), and an fsync of
 * each costs a journal commit each. Where `sync -f` cannot run, every regular file and folder
 * is flushed one by one, deepest first (links are not followed).
 */
export async function syncTree(dir: string): Promise<void> {
  const synced = await new Promise<boolean>((resolve) => {
    try {
      execFile('sync', ['-f', dir], { timeout: 120_000 }, (error) => resolve(error === null))
    } catch {
      // No process can be started here: flush file by file.
      resolve(false)
    }
  })
  if (!synced) await syncEach(dir)
}

async function syncEach(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) await syncEach(full)
    else if (entry.isFile()) await syncAsync(full)
  }
  await syncAsync(dir)
}

async function syncAsync(target: string) {
  const handle = await open(target, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
