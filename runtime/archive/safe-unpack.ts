import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, open } from 'node:fs/promises'
import path from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGunzip } from 'node:zlib'
import { Parser, Unpack, type ReadEntry } from 'tar'
import yauzl from 'yauzl'
import { firstEscapingLink, type ArchiveLink } from './links.ts'

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

export interface ArchiveLimits {
  maxEntries: number
  maxExpandedBytes: number
}

export type ArchiveFormat = 'zip' | 'tar.gz'

/** Why an archive is refused; `entry` is the normalized path, or the raw one for unsafe paths. */
export type ArchiveViolation =
  | { kind: 'too-many-entries'; limit: number }
  | { kind: 'too-large'; limit: number; atLeast: number }
  | { kind: 'unsafe-path'; entry: string; reason: string }
  | { kind: 'entry-type'; entry: string; type: string; reason: string }
  | { kind: 'unsafe-link'; entry: string; linkpath: string }
  /** `reason` is `message` prefixed with what was being read (`corrupt zip: …`). */
  | { kind: 'corrupt'; message: string; reason: string }

export interface ArchiveRules {
  limits: ArchiveLimits
  /**
   * `refuse`: only regular files and folders. `inside`: symbolic and hard links too (tar.gz),
   * when they resolve inside the archive, also through its other links (spec 4.11).
   */
  links: 'refuse' | 'inside'
  /** Entries skipped without being written (they still count as entries). */
  skip?: RegExp
  /** The caller's error for a violation. */
  refusal(violation: ArchiveViolation): Error
}

/** An accepted tar.gz entry as `inspectTarGz` shows it to its caller. */
export interface TarEntry {
  /** Normalized path inside the archive. */
  path: string
  type: string
  regular: boolean
  size: number
  /** The entry's bytes: attach a `data` listener synchronously to read them. */
  stream: ReadEntry
}

export interface TarListing {
  entries: number
  expandedBytes: number
  /** Raw header paths of the entries to write: nothing else is extracted. */
  accepted: ReadonlySet<string>
  /** The limits the archive was checked against: the extraction is held to them too. */
  limits: ArchiveLimits
}

const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04])
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b])
const TAR_REGULAR = new Set(['File', 'OldFile', 'ContiguousFile'])
const TAR_LINKS = new Set(['SymbolicLink', 'Link'])
const CLIMBING = 'absolute or climbing path'
/**
 * Compressed bytes read, and inflated bytes handed on, at a time. node-tar inflates each read
 * in one synchronous call (its `extract` reads 16 MB at once: a 9 MB archive of zeros became
 * 2 GB of memory before any check ran), so tar.gz archives are inflated here, streamed.
 */
const PIECE = 64 * 1024
/** Inflated tar bytes allowed per entry beyond the declared sizes: header, PAX records, padding. */
const TAR_OVERHEAD_PER_ENTRY = 8 * 1024
/** node-tar's own bound on compression ratio, kept now that the archive is inflated here. */
const MAX_RATIO = 1000

/** A relative path inside the archive, normalized; null when it is absolute or climbs out. */
export function insidePath(entryPath: string): string | null {
  if (entryPath.includes('\\') || entryPath.includes('\0')) return null
  if (entryPath.startsWith('/') || /^[A-Za-z]:/.test(entryPath)) return null
  if (entryPath.split('/').includes('..')) return null
  const normalized = path.posix.normalize(entryPath).replace(/\/$/, '')
  return normalized === '.' || normalized === '' ? '.' : normalized
}

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

/** Thrown inside this module; turned into the caller's error at its edge. */
class Violation extends Error {
  constructor(readonly violation: ArchiveViolation) {
    super(violation.kind)
  }
}

/** Counts entries and bytes against the limits as they are met. */
class Budget {
  entries = 0
  bytes = 0
  constructor(readonly limits: ArchiveLimits) {}
  entry(): void {
    if (++this.entries > this.limits.maxEntries) throw new Violation({ kind: 'too-many-entries', limit: this.limits.maxEntries })
  }

  add(n: number): void {
    this.bytes += n
    if (this.bytes > this.limits.maxExpandedBytes) throw new Violation({ kind: 'too-large', limit: this.limits.maxExpandedBytes, atLeast: this.bytes })
  }
}

const corrupt = (what: string, error: unknown): ArchiveViolation => {
  const message = String((error as Error)?.message ?? error)
  return { kind: 'corrupt', message, reason: `${what}: ${message}` }
}

// ── tar.gz (node-tar parses, inflated here; every header is checked in a first pass, nothing is written before) ──

/**
 * Inflates a tar.gz into a node-tar parser (a Parser, or an Unpack that writes), with
 * backpressure, counting the inflated bytes whatever the headers declare: past the limits'
 * allowance it stops with a too-large violation. Reading stops at the end-of-archive marker
 * (node-tar would keep all that follows it in memory) and at the parser's first error.
 */
function inflateTar(file: string, parser: Parser, limits: ArchiveLimits): Promise<void> {
  const allowance = limits.maxExpandedBytes + (limits.maxEntries + 1) * TAR_OVERHEAD_PER_ENTRY
  return new Promise((resolve, reject) => {
    const source = createReadStream(file, { highWaterMark: PIECE })
    const gunzip = createGunzip({ chunkSize: PIECE })
    let inflated = 0
    let head = Buffer.alloc(0)
    let current: ReadEntry | null = null
    let reading = true
    let settled = false
    const stopReading = () => {
      reading = false
      source.destroy()
      gunzip.destroy()
    }
    const fail = (error: unknown) => {
      if (settled) return
      settled = true
      stopReading()
      parser.abort(new Error('archive refused'))
      // An Unpack's open file ends here instead of waiting for bytes that never come.
      current?.end()
      reject(error)
    }
    source.on('error', fail)
    gunzip.on('error', (error) => fail(new Violation(corrupt('corrupt tar.gz', error))))
    parser.on('error', fail)
    parser.on('entry', (entry: ReadEntry) => { current = entry })
    parser.on('eof', () => queueMicrotask(() => {
      if (!reading) return
      stopReading()
      parser.end()
    }))
    parser.on('close', () => { if (!settled) { settled = true; resolve() } })
    gunzip.on('end', () => { if (reading) { reading = false; parser.end() } })
    gunzip.on('data', (chunk: Buffer) => {
      if (!reading) return
      inflated += chunk.length
      if (inflated > allowance) return fail(new Violation({ kind: 'too-large', limit: limits.maxExpandedBytes, atLeast: inflated }))
      if (inflated > MAX_RATIO * source.bytesRead)
        return fail(new Violation(corrupt('corrupt tar.gz', new Error(`max decompression ratio exceeded: ${(inflated / source.bytesRead).toFixed(2)} > ${MAX_RATIO}`))))
      if (head.length < GZIP_MAGIC.length) {
        head = Buffer.concat([head, chunk.subarray(0, GZIP_MAGIC.length - head.length)])
        // node-tar would inflate a nested gzip itself, uncounted.
        if (head.equals(GZIP_MAGIC)) return fail(new Violation(corrupt('corrupt tar.gz', new Error('compressed twice'))))
      }
      if (!parser.write(chunk)) {
        gunzip.pause()
        parser.once('drain', () => gunzip.resume())
      }
    })
    source.pipe(gunzip)
  })
}

/**
 * Reads the headers (streaming, nothing written) and refuses the archive at its first unsafe
 * entry. `onEntry` sees each accepted entry (its bytes too) and may throw its own refusal.
 */
export async function inspectTarGz(file: string, rules: ArchiveRules, onEntry?: (entry: TarEntry) => void): Promise<TarListing> {
  const budget = new Budget(rules.limits)
  const accepted = new Set<string>()
  const links: ArchiveLink[] = []
  let refusal: unknown = null
  const parser = new Parser({ strict: true, zstd: false })
  parser.on('entry', (entry: ReadEntry) => {
    if (refusal === null) {
      try {
        // The declared size is charged here, before any of the body is read.
        const inside = checkTarEntry(entry, rules, budget, links)
        if (inside !== null) {
          accepted.add(entry.path)
          onEntry?.({ path: inside, type: entry.type, regular: TAR_REGULAR.has(entry.type), size: entry.size ?? 0, stream: entry })
        }
      } catch (error) {
        refusal = error
        // Stops reading: the rest of the archive (a decompression bomb, say) is never inflated.
        parser.abort(new Error('archive refused'))
      }
    }
    // Bodies flow on (to `onEntry`'s listener, or nowhere) instead of piling up in the entry.
    entry.resume()
  })
  try {
    await inflateTar(file, parser, rules.limits)
  } catch (error) {
    if (error instanceof Violation) throw rules.refusal(error.violation)
    if (refusal === null) throw rules.refusal(corrupt('corrupt tar.gz', error))
  }
  // A refusal of the caller's own `onEntry` goes out as it is.
  if (refusal !== null) throw refusal instanceof Violation ? rules.refusal(refusal.violation) : refusal
  // The text check of each link misses links chained through other links of the archive.
  const escaping = firstEscapingLink(links)
  if (escaping) throw rules.refusal({ kind: 'unsafe-link', entry: escaping.path, linkpath: escaping.target })
  return { entries: budget.entries, expandedBytes: budget.bytes, accepted, limits: rules.limits }
}

/** The entry's normalized path when it is to be written, null when skipped; throws a Violation. */
function checkTarEntry(entry: ReadEntry, rules: ArchiveRules, budget: Budget, links: ArchiveLink[]): string | null {
  budget.entry()
  const raw = entry.path
  if (rules.skip?.test(raw)) return null
  const inside = insidePath(raw)
  if (!inside) throw new Violation({ kind: 'unsafe-path', entry: raw, reason: CLIMBING })
  const type = entry.type
  const allowed = TAR_REGULAR.has(type) || type === 'Directory' || (rules.links === 'inside' && TAR_LINKS.has(type))
  if (!allowed) throw new Violation({ kind: 'entry-type', entry: inside, type, reason: `entry type ${type} is not allowed` })
  if (type === 'SymbolicLink' || type === 'Link') {
    const target = entry.linkpath ?? ''
    // A symlink resolves from its own folder; a hard link names a path of the archive.
    const resolved = target.startsWith('/') ? null
      : path.posix.normalize(type === 'SymbolicLink' ? path.posix.join(path.posix.dirname(inside), target) : target)
    if (!resolved || resolved === '..' || resolved.startsWith('../') || target.includes('\\'))
      throw new Violation({ kind: 'unsafe-link', entry: inside, linkpath: target })
    links.push({ path: inside, type, target })
  }
  budget.add(entry.size ?? 0)
  return inside
}

/**
 * Writes the entries an inspection accepted, without owners or modes from the archive, held
 * to the same limits while writing; node-tar's own guards (no absolute paths, no `..`, no
 * writing through links) stay on.
 */
export async function extractTarGz(file: string, dest: string, listing: TarListing, rules: Pick<ArchiveRules, 'refusal'>): Promise<void> {
  const unpack = new Unpack({ cwd: dest, strict: true, zstd: false, preserveOwner: false, filter: (p) => listing.accepted.has(p) })
  try {
    await inflateTar(file, unpack, listing.limits)
  } catch (error) {
    throw rules.refusal(error instanceof Violation ? error.violation : corrupt('corrupt tar.gz', error))
  }
}

// ── zip (yauzl: names are checked by the library too, sizes validated while reading) ──

/** zip entries carry links as mode bits with the target as content: always refused. */
async function unpackZip(file: string, dest: string, rules: ArchiveRules): Promise<void> {
  const budget = new Budget(rules.limits)
  let zip: yauzl.ZipFile
  try {
    zip = await yauzl.openPromise(file, { lazyEntries: true, strictFileNames: true, validateEntrySizes: true })
  } catch (error) {
    throw rules.refusal(corrupt('unreadable zip', error))
  }
  try {
    for await (const entry of zip.eachEntry()) {
      budget.entry()
      const name = entry.fileName
      if (rules.skip?.test(name)) continue
      const inside = insidePath(name)
      if (!inside || inside === '.') throw new Violation({ kind: 'unsafe-path', entry: name, reason: CLIMBING })
      if (name.endsWith('/')) { await mkdir(path.join(dest, inside), { recursive: true }); continue }
      const mode = (entry.externalFileAttributes >>> 16) & 0o170000
      if (mode !== 0 && mode !== 0o100000) throw new Violation({ kind: 'entry-type', entry: inside, type: `mode 0${mode.toString(8)}`, reason: 'not a regular file (link or device)' })
      budget.add(entry.uncompressedSize)
      const target = path.join(dest, inside)
      await mkdir(path.dirname(target), { recursive: true })
      await pipeline(await zip.openReadStreamPromise(entry), countBytes(budget, entry.uncompressedSize), createWriteStream(target, { flags: 'wx' }))
    }
  } catch (error) {
    if (error instanceof Violation) throw rules.refusal(error.violation)
    const message = (error as Error).message ?? String(error)
    // yauzl refuses unsafe names itself ("absolute path", "invalid relative path", "invalid characters in fileName").
    if (/path|fileName/i.test(message)) throw rules.refusal({ kind: 'unsafe-path', entry: message.replace(/^.*?: /, ''), reason: message.split(':')[0]! })
    throw rules.refusal(corrupt('corrupt zip', error))
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
