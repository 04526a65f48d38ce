import { archiveFormat, unpackArchive, type ArchiveLimits, type ArchiveViolation } from '../archive/safe-unpack.ts'
import { ApiError } from '../../shared/errors/index.ts'

/**
 * Unpacks an algorithm package (zip as `exportSingleAlg` writes it, tar.gz as `export` does)
 * into an empty folder under the archive rules of runtime/archive (spec 4.10 "upload"): only
 * regular files and folders, no links at all, no absolute or `..` paths, bounded entry
 * count and expanded size. The caller deletes the folder on failure.
 */

/** Folders some zip tools add on their own (macOS resource forks): skipped, never written. */
const IGNORED = /^(__MACOSX)(\/|$)|(^|\/)\.DS_Store$/

const invalid = (reason: string) => new ApiError('AlgorithmPackageInvalid', { details: { reason } })
const unsafe = (entry: string, reason: string) => new ApiError('AlgorithmPackageUnsafe', { details: { entry: entry.slice(0, 512), reason } })

function refusal(violation: ArchiveViolation): ApiError {
  switch (violation.kind) {
    case 'too-many-entries': return new ApiError('AlgorithmPackageTooLarge', { details: { limitEntries: violation.limit } })
    case 'too-large': return new ApiError('AlgorithmPackageTooLarge', { details: { limitBytes: String(violation.limit), atLeastBytes: String(violation.atLeast) } })
    case 'unsafe-path': case 'entry-type': return unsafe(violation.entry, violation.reason)
    // Links are refused as entry types; no link reaches the link check.
    case 'unsafe-link': return unsafe(violation.entry, 'link')
    case 'corrupt': return invalid(violation.reason.slice(0, 200))
  }
}

export async function unpackAlgorithmPackage(file: string, dest: string, limits: ArchiveLimits): Promise<void> {
  const format = await archiveFormat(file)
  if (!format) throw invalid('not a zip or tar.gz archive')
  await unpackArchive(file, dest, format, { limits, links: 'refuse', skip: IGNORED, refusal })
}
