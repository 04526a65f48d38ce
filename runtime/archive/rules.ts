import path from 'node:path'

// The rules every archive is held to, and how a violation is counted and told (runtime/archive/safe-unpack.ts).

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

/** Why a path is refused. */
export const CLIMBING = 'absolute or climbing path'

/** A relative path inside the archive, normalized; null when it is absolute or climbs out. */
export function insidePath(entryPath: string): string | null {
  if (entryPath.includes('\\') || entryPath.includes('\0')) return null
  if (entryPath.startsWith('/') || /^[A-Za-z]:/.test(entryPath)) return null
  if (entryPath.split('/').includes('..')) return null
  const normalized = path.posix.normalize(entryPath).replace(/\/$/, '')
  return normalized === '.' || normalized === '' ? '.' : normalized
}

/** Thrown inside this folder; turned into the caller's error at its edge. */
export class Violation extends Error {
  constructor(readonly violation: ArchiveViolation) {
    super(violation.kind)
  }
}

/** Counts entries and bytes against the limits as they are met. */
export class Budget {
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

export const corrupt = (what: string, error: unknown): ArchiveViolation => {
  const message = String((error as Error)?.message ?? error)
  return { kind: 'corrupt', message, reason: `${what}: ${message}` }
}
