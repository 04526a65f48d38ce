import { createHash } from 'node:crypto'
import { openAsBlob } from 'node:fs'
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import path from 'node:path'
import type { ResumeRecord, ResumeStore, UploadSource } from './upload.ts'

/** A file on disk as an upload source; chunks are read lazily from disk, never the whole file. */
export async function fileSource(file: string): Promise<UploadSource & { path: string; mtimeMs: number }> {
  const absolute = path.resolve(file)
  const info = await stat(absolute)
  if (!info.isFile()) throw Object.assign(new Error(`${file} is not a file`), { code: 'ENOTFILE' })
  const blob = await openAsBlob(absolute)
  return { name: path.basename(absolute), size: info.size, path: absolute, mtimeMs: info.mtimeMs, slice: (start, end) => blob.slice(start, end) }
}

/** The resume key of a file: the same file (path, size, modification time) on the same account. */
export const fileResumeKey = (source: { path: string; size: number; mtimeMs: number }, account: string, purpose = 'image') =>
  createHash('sha256').update(JSON.stringify([account, purpose, source.path, source.size, Math.floor(source.mtimeMs)])).digest('hex').slice(0, 32)

export const defaultStateDir = () => process.env.DEVICE_CLI_STATE_DIR || path.join(homedir(), '.device-cli')

/**
 * Resume identities on disk (spec 4.12): one JSON file per upload under `<dir>/uploads/`,
 * written atomically, deleted on completion or cancellation.
 */
export class FileResumeStore implements ResumeStore {
  constructor(readonly dir: string) {}

  private file(key: string) {
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(key)) throw new Error(`bad resume key ${key}`)
    return path.join(this.dir, 'uploads', `${key}.json`)
  }

  async load(key: string): Promise<ResumeRecord | null> {
    try {
      const record = JSON.parse(await readFile(this.file(key), 'utf8')) as ResumeRecord
      return typeof record?.clientRequestId === 'string' && typeof record.size === 'number' ? record : null
    } catch {
      return null
    }
  }

  async save(key: string, record: ResumeRecord): Promise<void> {
    const file = this.file(key)
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 })
    const temporary = `${file}.${process.pid}.tmp`
    await writeFile(temporary, JSON.stringify(record, null, 2), { mode: 0o600 })
    await rename(temporary, file)
  }

  async remove(key: string): Promise<void> {
    await rm(this.file(key), { force: true })
  }
}
