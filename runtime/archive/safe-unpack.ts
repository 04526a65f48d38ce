import { mkdir, open } from 'node:fs/promises'
import type { ArchiveFormat, ArchiveRules } from './rules.ts'
import { extractTarGz, GZIP_MAGIC, inspectTarGz } from './tar-gz.ts'
import { unpackZip } from './zip.ts'

/**
 * Archive safety for every archive the device unpacks: algorithm packages (spec 4.10
 * "upload", zip or tar.gz) and upgrade packages (spec 4.11 "archive safety", tar.gz). One
 * set of rules decides whether an entry may be written: its path normalized and kept inside
 * the destination, its type (regular files and folders; links only when the caller allows
 * links that resolve inside the archive), and bounds on the entry count and the expanded
 * size: each entry's declared size before its body is read, and the bytes actually inflated
 * while streaming (a header may lie). Reading stops at the first violation, and memory stays
 * bounded by a few read pieces whatever the archive holds; a tar.gz is written only after all
 * its headers passed, a zip entry by entry (the caller deletes the folder on failure). Each
 * caller maps a violation to its own catalogue error.
 */

export { insidePath, type ArchiveFormat, type ArchiveLimits, type ArchiveRules, type ArchiveViolation } from './rules.ts'
export { extractTarGz, inspectTarGz, type TarEntry, type TarListing } from './tar-gz.ts'

const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04])

/** The format by its magic bytes; null when it is neither. */
export async function archiveFormat(file: string): Promise<ArchiveFormat | null> {
  const handle = await open(file, 'r')
  try {
    const head = Buffer.alloc(4)
    const { bytesRead } = await handle.read(head, 0, 4, 0)
    if (bytesRead >= 4 && head.equals(ZIP_MAGIC)) return 'zip'
    if (bytesRead >= 2 && head.subarray(0, 2).equals(GZIP_MAGIC)) return 'tar.gz'
    return null
  } finally {
    await handle.close()
  }
}

/** Unpacks a checked archive into `dest` (created when missing). */
export async function unpackArchive(file: string, dest: string, format: ArchiveFormat, rules: ArchiveRules): Promise<void> {
  await mkdir(dest, { recursive: true })
  if (format === 'zip') return unpackZip(file, dest, rules)
  await extractTarGz(file, dest, await inspectTarGz(file, rules), rules)
}
