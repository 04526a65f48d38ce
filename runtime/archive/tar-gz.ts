import { createReadStream } from 'node:fs'
import path from 'node:path'
import { createGunzip } from 'node:zlib'
import { Parser, Unpack, type ReadEntry } from 'tar'
import { firstEscapingLink, type ArchiveLink } from './links.ts'
import { Budget, CLIMBING, corrupt, insidePath, Violation, type ArchiveLimits, type ArchiveRules } from './rules.ts'

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

export const GZIP_MAGIC = Buffer.from([0x1f, 0x8b])
const TAR_REGULAR = new Set(['File', 'OldFile', 'ContiguousFile'])
const TAR_LINKS = new Set(['SymbolicLink', 'Link'])
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
