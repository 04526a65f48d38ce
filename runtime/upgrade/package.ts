import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { lstat, mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { Type, type Static } from '@sinclair/typebox'
import {
  extractTarGz, insidePath, inspectTarGz, type ArchiveLimits, type ArchiveViolation, type TarListing,
} from '../archive/safe-unpack.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { checkSchema, formatIssue } from '../../shared/schema/validate.ts'

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

function refusal(violation: ArchiveViolation): ApiError {
  switch (violation.kind) {
    case 'too-many-entries': return new ApiError('UpgradeTooManyEntries', { details: { limit: violation.limit } })
    case 'too-large': return new ApiError('UpgradeTooLarge', { details: { limitBytes: String(violation.limit), atLeastBytes: String(violation.atLeast) } })
    case 'unsafe-path': return new ApiError('UpgradeUnsafePath', { details: { entry: violation.entry.slice(0, 512) } })
    case 'entry-type': return new ApiError('UpgradeUnsafeEntryType', { details: { entry: violation.entry, type: violation.type } })
    case 'unsafe-link': return new ApiError('UpgradeUnsafeLink', { details: { entry: violation.entry, linkpath: violation.linkpath.slice(0, 512) } })
    case 'corrupt': return new ApiError('UpgradeArchiveCorrupt', { details: { reason: violation.message.slice(0, 200) } })
  }
}

export interface ArchiveListing extends TarListing {
  regularFiles: Set<string>
  manifest: PackageManifest
}

/**
 * Reads the archive's headers (streaming; no byte is written to disk) and refuses it on the
 * first unsafe entry (runtime/archive: absolute or `..` paths, links resolving outside, device
 * files / FIFOs, too many entries, too many expanded bytes), or when it has no valid
 * `manifest.json` at the root.
 */
export async function inspectArchive(file: string, name: PackageName, limits: ArchiveLimits): Promise<ArchiveListing> {
  const regularFiles = new Set<string>()
  let manifestText: string | null = null
  // spec 4.11: links may stay, as long as they resolve inside the package.
  const tar = await inspectTarGz(file, { limits, links: 'inside', refusal }, (entry) => {
    if (!entry.regular) return
    if (entry.path !== MANIFEST_NAME) { regularFiles.add(entry.path); return }
    if (entry.size > MANIFEST_MAX_BYTES) throw new ApiError('UpgradeManifestInvalid', { details: { reason: 'manifest too large' } })
    const chunks: Buffer[] = []
    entry.stream.on('data', (chunk: Buffer) => chunks.push(chunk))
    entry.stream.on('end', () => { manifestText = Buffer.concat(chunks).toString('utf8') })
  })
  if (manifestText === null) throw new ApiError('UpgradeManifestMissing', { details: { expected: MANIFEST_NAME } })
  const manifest = parseManifest(manifestText, name)
  for (const listed of Object.keys(manifest.files)) {
    if (!regularFiles.has(insidePath(listed) ?? '\0')) throw new ApiError('UpgradeChecksumMismatch', { details: { file: listed.slice(0, 512), reason: 'listed in the manifest but not in the archive' } })
  }
  for (const present of regularFiles) {
    if (!(present in manifest.files)) throw new ApiError('UpgradeChecksumMismatch', { details: { file: present, reason: 'in the archive but not listed in the manifest' } })
  }
  return { ...tar, regularFiles, manifest }
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
 * Extracts an inspected package into `dir` (emptied first; only the entries the inspection
 * accepted) and verifies every file's SHA-256 against the manifest.
 */
export async function extractPackage(file: string, dir: string, listing: ArchiveListing): Promise<void> {
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir, { recursive: true })
  await extractTarGz(file, dir, listing, { refusal })
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
