import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'

/** The text of configuration files as they are now (null: absent), for a file backend's snapshot. */
export type FileSnapshot = Record<string, string | null>

export async function captureFiles(files: string[]): Promise<FileSnapshot> {
  const snapshot: FileSnapshot = {}
  for (const file of files) {
    try {
      snapshot[file] = await readFile(file, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      snapshot[file] = null
    }
  }
  return snapshot
}

/** Replaces a file whole (temporary file + rename), so a crash never leaves half a configuration. */
export async function writeFileAtomically(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true })
  const temporary = `${file}.cwai-tmp`
  await writeFile(temporary, text, { mode: 0o644 })
  await rename(temporary, file)
}

export async function restoreFiles(snapshot: FileSnapshot): Promise<void> {
  for (const [file, text] of Object.entries(snapshot)) {
    if (text === null) await rm(file, { force: true })
    else await writeFileAtomically(file, text)
  }
}

/** A resolv.conf with the given servers and search domains. */
export const resolvConfText = (servers: string[], searchDomains: string[] = []) =>
  ['# written by the device (network settings)', ...(searchDomains.length ? [`search ${searchDomains.join(' ')}`] : []), ...servers.map((s) => `nameserver ${s}`)].join('\n') + '\n'
