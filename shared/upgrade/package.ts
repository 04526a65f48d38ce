import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { lstat, mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { Type, type Static } from '@sinclair/typebox'
import { list, extract } from 'tar'
import { ApiError } from '../errors/index.ts'
import { checkSchema, formatIssue } from '../schema/validate.ts'
import { firstEscapingLink, type ArchiveLink } from './archive-links.ts'

/**
 * Upgrade package checks (spec 4.11 "Software upgrade request"): file name, MD5, archive
 * safety, package layout. Each refusal is its own catalogue entry. Pure functions over a file
 * path, shared by the upgrade endpoint (before restart) and the supervisor (at start-up).
 */

export interface PackageName {
  product: string
  version: string
  major: number
  minor: number
  patch: number
  md5: string
}

export interface ArchiveLimits {
  maxEntries: number
  maxExpandedBytes: number
}

/** `manifest.json` at the package root. */
export const PackageManifest = Type.Object({
  product: Type.String({ minLength: 1, maxLength: 64 }),
  version: Type.String({ pattern: '^[0-9]{1,6}\\.[0-9]{1,6}\\.[0-9]{1,6}$' }),
  /** The runtime's start file inside the package, e.g. `dist/runtime/server.mjs`. */
  entryPoint: Type.String({ minLength: 1, maxLength: 512 }),
  /** Every regular file of the package (but the manifest) with its lower-case hex SHA-256. */
  files: Type.Record(Type.String({ minLength: 1, maxLength: 1024 }), Type.String({ pattern: '^[0-9a-f]{64}$' })),
}, { additionalProperties: true })
export type PackageManifest = Static<typeof PackageManifest>

export const MANIFEST_NAME = 'manifest.json'
const MANIFEST_MAX_BYTES = 4 * 1024 * 1024

// spec 4.11 / 9: `<product>-V<major>.<minor>.<patch>-<32-char-md5>.tar.gz`.
const NAME = /^(.+)-V(\d{1,6})\.(\d{1,6})\.(\d{1,6})-([0-9a-fA-F]{32})\.tar\.gz$/

export function parsePackageName(originalFilename: string, product: string): PackageName {
  const match = NAME.exec(originalFilename)
  if (!match) throw new ApiError('UpgradeBadFilename', { details: { filename: originalFilename.slice(0, 256), expected: `${product}-V<major>.<minor>.<patch>-<32-hex md5>.tar.gz` } })
  const [, prefix, major, minor, patch, md5] = match
  if (prefix !== product) throw new ApiError('UpgradeWrongProduct', { details: { product: prefix, expected: product } })
  return { product, major: Number(major), minor: Number(minor), patch: Number(patch), version: `${Number(major)}.${Number(minor)}.${Number(patch)}`, md5: md5!.toLowerCase() }
}

export async function fileDigest(file: string, algorithm: 'md5' | 'sha256'): Promise<string> {
  const hash = createHash(algorithm)
  await pipeline(createReadStream(file), hash)
  return hash.digest('hex')
}

export async function checkMd5(file: string, name: PackageName) {
  const actual = await fileDigest(file, 'md5')
  if (actual !== name.md5) throw new ApiError('UpgradeMd5Mismatch', { details: { expected: name.md5, actual } })
}

/** Compares `a.b.c` versions numerically. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number)
  const pb = b.split('.').map(Number)
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0)
  return 0
}

/** A relative path inside the package, normalized; null when it is absolute or climbs out. */
export function insidePath(entryPath: string): string | null {
  if (entryPath.includes('\\') || entryPath.includes('\0')) return null
  if (entryPath.startsWith('/') || /^[A-Za-z]:/.test(entryPath)) return null
  if (entryPath.split('/').includes('..')) return null
  const normalized = path.posix.normalize(entryPath).replace(/\/$/, '')
  return normalized === '.' || normalized === '' ? '.' : normalized
}

const REGULAR = new Set(['File', 'OldFile', 'ContiguousFile'])
const ALLOWED = new Set([...REGULAR, 'Directory', 'SymbolicLink', 'Link'])

export interface ArchiveListing {
  entries: number
  expandedBytes: number
  regularFiles: Set<string>
  manifest: PackageManifest
}

/**
 * Reads the archive's headers (streaming; no byte is written to disk) and refuses it on the
 * first unsafe entry: absolute or `..` paths, links resolving outside, device files / FIFOs,
 * too many entries, too many expanded bytes, or no valid `manifest.json` at the root.
 */
export async function inspectArchive(file: string, name: PackageName, limits: ArchiveLimits): Promise<ArchiveListing> {
  let entries = 0
  let expandedBytes = 0
  let refusal: ApiError | null = null
  const regularFiles = new Set<string>()
  let manifestText: string | null = null
  const links: ArchiveLink[] = []
  const refuse = (error: ApiError) => { refusal ??= error }
  try {
    await list({
      file,
      strict: true,
      onReadEntry(entry) {
        if (refusal) return entry.resume()
        entries += 1
        if (entries > limits.maxEntries) return refuse(new ApiError('UpgradeTooManyEntries', { details: { limit: limits.maxEntries } }))
        expandedBytes += entry.size ?? 0
        if (expandedBytes > limits.maxExpandedBytes) return refuse(new ApiError('UpgradeTooLarge', { details: { limitBytes: String(limits.maxExpandedBytes), atLeastBytes: String(expandedBytes) } }))
        const raw = entry.path
        const inside = insidePath(raw)
        if (!inside) return refuse(new ApiError('UpgradeUnsafePath', { details: { entry: raw.slice(0, 512) } }))
        if (!ALLOWED.has(entry.type)) return refuse(new ApiError('UpgradeUnsafeEntryType', { details: { entry: inside, type: entry.type } }))
        if (entry.type === 'SymbolicLink' || entry.type === 'Link') {
          const target = entry.linkpath ?? ''
          // A symlink resolves from its own folder; a hard link names a path of the archive.
          const resolved = target.startsWith('/') ? null
            : path.posix.normalize(entry.type === 'SymbolicLink' ? path.posix.join(path.posix.dirname(inside), target) : target)
          if (!resolved || resolved === '..' || resolved.startsWith('../') || target.includes('\\'))
            return refuse(new ApiError('UpgradeUnsafeLink', { details: { entry: inside, linkpath: target.slice(0, 512) } }))
          links.push({ path: inside, type: entry.type, target })
        }
        if (REGULAR.has(entry.type)) {
          if (inside === MANIFEST_NAME) {
            if ((entry.size ?? 0) > MANIFEST_MAX_BYTES) return refuse(new ApiError('UpgradeManifestInvalid', { details: { reason: 'manifest too large' } }))
            const chunks: Buffer[] = []
            entry.on('data', (chunk: Buffer) => chunks.push(chunk))
            entry.on('end', () => { manifestText = Buffer.concat(chunks).toString('utf8') })
          } else {
            regularFiles.add(inside)
          }
        }
      },
    })
  } catch (error) {
    if (refusal) throw refusal
    throw new ApiError('UpgradeArchiveCorrupt', { details: { reason: String((error as Error).message ?? error).slice(0, 200) } })
  }
  if (refusal) throw refusal
  // The text check above misses links chained through other links of the archive.
  const escaping = firstEscapingLink(links)
  if (escaping) throw new ApiError('UpgradeUnsafeLink', { details: { entry: escaping.path, linkpath: escaping.target.slice(0, 512) } })
  if (manifestText === null) throw new ApiError('UpgradeManifestMissing', { details: { expected: MANIFEST_NAME } })
  const manifest = parseManifest(manifestText, name)
  for (const listed of Object.keys(manifest.files)) {
    if (!regularFiles.has(insidePath(listed) ?? '\0')) throw new ApiError('UpgradeChecksumMismatch', { details: { file: listed.slice(0, 512), reason: 'listed in the manifest but not in the archive' } })
  }
  for (const present of regularFiles) {
    if (!(present in manifest.files)) throw new ApiError('UpgradeChecksumMismatch', { details: { file: present, reason: 'in the archive but not listed in the manifest' } })
  }
  return { entries, expandedBytes, regularFiles, manifest }
}

function parseManifest(text: string, name: PackageName): PackageManifest {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new ApiError('UpgradeManifestInvalid', { details: { reason: 'not valid JSON' } })
  }
  const [first] = checkSchema(PackageManifest, value)
  if (first) throw new ApiError('UpgradeManifestInvalid', { details: { reason: formatIssue(first) } })
  const manifest = value as PackageManifest
  if (manifest.product !== name.product) throw new ApiError('UpgradeManifestInvalid', { details: { reason: 'product differs from the package name', product: manifest.product } })
  if (manifest.version !== name.version) throw new ApiError('UpgradeManifestInvalid', { details: { reason: 'version differs from the package name', version: manifest.version } })
  const entry = insidePath(manifest.entryPoint)
  if (!entry || !(entry in manifest.files)) throw new ApiError('UpgradeManifestInvalid', { details: { reason: 'entryPoint is not a file of the package', entryPoint: manifest.entryPoint } })
  for (const key of Object.keys(manifest.files)) {
    if (insidePath(key) !== key) throw new ApiError('UpgradeManifestInvalid', { details: { reason: 'file keys must be normalized relative paths', file: key.slice(0, 512) } })
  }
  return manifest
}

/**
 * Extracts an inspected package into `dir` (emptied first) and verifies every file's SHA-256
 * against the manifest. node-tar's own guards (no absolute paths, no `..`, no writing
 * through symlinks) stay on; the filter repeats the entry-type rule.
 */
export async function extractPackage(file: string, dir: string, listing: ArchiveListing): Promise<void> {
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir, { recursive: true })
  try {
    await extract({ file, cwd: dir, strict: true, preservePaths: false, noChmod: true, filter: (_p, entry) => ALLOWED.has((entry as { type: string }).type) })
  } catch (error) {
    throw new ApiError('UpgradeArchiveCorrupt', { details: { reason: String((error as Error).message ?? error).slice(0, 200) } })
  }
  for (const [relative, sha256] of Object.entries(listing.manifest.files)) {
    const full = path.join(dir, relative)
    const stats = await lstat(full).catch(() => null)
    if (!stats?.isFile()) throw new ApiError('UpgradeChecksumMismatch', { details: { file: relative, reason: 'missing after extraction' } })
    const actual = await fileDigest(full, 'sha256')
    if (actual !== sha256) throw new ApiError('UpgradeChecksumMismatch', { details: { file: relative, expected: sha256, actual } })
  }
}

/** All checks before restart: name, MD5, archive safety, layout. Returns what was read. */
export async function validatePackage(file: string, originalFilename: string, product: string, limits: ArchiveLimits) {
  const name = parsePackageName(originalFilename, product)
  await checkMd5(file, name)
  const listing = await inspectArchive(file, name, limits)
  return { name, listing }
}
