import { createWriteStream } from 'node:fs'
import { mkdir, open } from 'node:fs/promises'
import path from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { extract, list } from 'tar'
import yauzl from 'yauzl'
import { ApiError } from '../../shared/errors/index.ts'
import { insidePath } from '../../shared/upgrade/package.ts'

/**
 * Unpacks an algorithm package (zip as `exportSingleAlg` writes it, tar.gz as `export` does)
 * into an empty folder, refusing it before or while writing when it is unsafe (spec 4.10
 * "upload"): only regular files and folders, no absolute or `..` paths, no links,
 * bounded entry count and expanded size. The caller deletes the folder on failure.
 */
export interface UnpackLimits {
  maxEntries: number
  maxExpandedBytes: number
}

const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04])
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b])
/** Folders some zip tools add on their own (macOS resource forks): skipped, never written. */
const IGNORED = /^(__MACOSX)(\/|$)|(^|\/)\.DS_Store$/

const invalid = (reason: string, extra: Record<string, unknown> = {}) => new ApiError('AlgorithmPackageInvalid', { details: { reason, ...extra } })
const unsafe = (entry: string, reason: string) => new ApiError('AlgorithmPackageUnsafe', { details: { entry: entry.slice(0, 512), reason } })

async function archiveKind(file: string): Promise<'zip' | 'tar.gz'> {
  const handle = await open(file, 'r')
  try {
    const head = Buffer.alloc(4)
    const { bytesRead } = await handle.read(head, 0, 4, 0)
    if (bytesRead >= 4 && head.equals(ZIP_MAGIC)) return 'zip'
    if (bytesRead >= 2 && head.subarray(0, 2).equals(GZIP_MAGIC)) return 'tar.gz'
  } finally {
    await handle.close()
  }
  throw invalid('not a zip or tar.gz archive')
}

/** Counts entries and bytes against the limits as they are met. */
class Budget {
  entries = 0
  bytes = 0
  constructor(readonly limits: UnpackLimits) {}
  entry(): void {
    if (++this.entries > this.limits.maxEntries)
      throw new ApiError('AlgorithmPackageTooLarge', { details: { limitEntries: this.limits.maxEntries } })
  }
  add(n: number): void {
    this.bytes += n
    if (this.bytes > this.limits.maxExpandedBytes)
      throw new ApiError('AlgorithmPackageTooLarge', { details: { limitBytes: String(this.limits.maxExpandedBytes), atLeastBytes: String(this.bytes) } })
  }
}

export async function unpackArchive(file: string, dest: string, limits: UnpackLimits): Promise<void> {
  await mkdir(dest, { recursive: true })
  if ((await archiveKind(file)) === 'zip') await unpackZip(file, dest, new Budget(limits))
  else await unpackTarGz(file, dest, new Budget(limits))
}

// ── zip (yauzl: names are checked by the library too, sizes validated while reading) ──
async function unpackZip(file: string, dest: string, budget: Budget): Promise<void> {
  let zip: yauzl.ZipFile
  try {
    zip = await yauzl.openPromise(file, { lazyEntries: true, strictFileNames: true, validateEntrySizes: true })
  } catch (error) {
    throw invalid(`unreadable zip: ${(error as Error).message}`.slice(0, 200))
  }
  try {
    for await (const entry of zip.eachEntry()) {
      budget.entry()
      const name = entry.fileName
      if (IGNORED.test(name)) continue
      const inside = insidePath(name)
      if (!inside || inside === '.') throw unsafe(name, 'absolute or climbing path')
      const mode = (entry.externalFileAttributes >>> 16) & 0o170000
      if (name.endsWith('/')) { await mkdir(path.join(dest, inside), { recursive: true }); continue }
      if (mode !== 0 && mode !== 0o100000) throw unsafe(inside, 'not a regular file (link or device)')
      budget.add(entry.uncompressedSize)
      const target = path.join(dest, inside)
      await mkdir(path.dirname(target), { recursive: true })
      await pipeline(await zip.openReadStreamPromise(entry), countBytes(budget, entry.uncompressedSize), createWriteStream(target, { flags: 'wx' }))
    }
  } catch (error) {
    if (error instanceof ApiError) throw error
    const message = (error as Error).message ?? String(error)
    // yauzl refuses unsafe names itself ("absolute path", "invalid relative path", "invalid characters in fileName").
    if (/path|fileName/i.test(message)) throw unsafe(message.replace(/^.*?: /, ''), message.split(':')[0]!)
    throw invalid(`corrupt zip: ${message}`.slice(0, 200))
  } finally {
    zip.close()
  }
}

/** Passes bytes through, charging them to the budget (the header's size may lie). */
function countBytes(budget: Budget, declared: number): Transform {
  let seen = 0
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length
      try {
        if (seen > declared) budget.add(Math.min(chunk.length, seen - declared))
        done(null, chunk)
      } catch (error) {
        done(error as Error)
      }
    },
  })
}

// ── tar.gz (node-tar: every header is checked in a first pass, nothing is written before) ──
const TAR_REGULAR = new Set(['File', 'OldFile', 'ContiguousFile'])

async function unpackTarGz(file: string, dest: string, budget: Budget): Promise<void> {
  let refusal: ApiError | null = null
  const allowed = new Set<string>()
  try {
    await list({
      file,
      strict: true,
      onReadEntry(entry) {
        if (refusal) return entry.resume()
        try {
          budget.entry()
          const raw = entry.path
          if (IGNORED.test(raw)) return entry.resume()
          const inside = insidePath(raw)
          if (!inside) throw unsafe(raw, 'absolute or climbing path')
          if (entry.type === 'Directory') { allowed.add(raw); return entry.resume() }
          if (!TAR_REGULAR.has(entry.type)) throw unsafe(inside, `entry type ${entry.type} is not allowed`)
          budget.add(entry.size ?? 0)
          allowed.add(raw)
        } catch (error) {
          refusal = error as ApiError
        }
        entry.resume()
      },
    })
  } catch (error) {
    if (refusal) throw refusal
    throw invalid(`corrupt tar.gz: ${(error as Error).message}`.slice(0, 200))
  }
  if (refusal) throw refusal
  try {
    // The first pass decided: only its entries are written, without owners or modes from the archive.
    await extract({ file, cwd: dest, strict: true, preserveOwner: false, noChmod: true, filter: (p) => allowed.has(p) })
  } catch (error) {
    throw invalid(`corrupt tar.gz: ${(error as Error).message}`.slice(0, 200))
  }
}
