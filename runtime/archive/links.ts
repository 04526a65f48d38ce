import path from 'node:path'

/**
 * Where the links of an archive point once extracted (spec 4.11: "no links pointing outside").
 * A link target is resolved the way the file system will: every component that is itself a
 * symlink of the archive is followed, so `d/up -> ..` plus `x -> d/up/..` is seen to climb
 * out even though each target looks harmless as text. Checked after the whole listing is read,
 * because a link may pass through another one defined later in the archive.
 */

export interface ArchiveLink {
  /** Normalized path of the link inside the archive. */
  path: string
  type: 'SymbolicLink' | 'Link'
  target: string
}

const MAX_FOLLOWED = 40

/**
 * The archive-relative path `target` reaches from `fromDir` (components), following the
 * archive's symlinks; null when it leaves the archive root, is absolute, or loops.
 */
function resolveThroughLinks(symlinks: Map<string, string>, fromDir: string[], target: string): string | null {
  if (target.startsWith('/') || target.includes('\\') || target.includes('\0')) return null
  const resolved = [...fromDir]
  const pending = target.split('/')
  let followed = 0
  while (pending.length > 0) {
    const part = pending.shift()!
    if (part === '' || part === '.') continue
    if (part === '..') {
      if (resolved.length === 0) return null
      resolved.pop()
      continue
    }
    resolved.push(part)
    const linkTarget = symlinks.get(resolved.join('/'))
    if (linkTarget === undefined) continue
    if (++followed > MAX_FOLLOWED) return null
    // A symlink resolves from its own folder: replace it by its target and go on.
    resolved.pop()
    if (linkTarget.startsWith('/')) return null
    pending.unshift(...linkTarget.split('/'))
  }
  return resolved.join('/') || '.'
}

/** The first link that resolves outside the archive root, or null when all stay inside. */
export function firstEscapingLink(links: ArchiveLink[]): ArchiveLink | null {
  const symlinks = new Map(links.filter((l) => l.type === 'SymbolicLink').map((l) => [l.path, l.target]))
  for (const link of links) {
    // A symlink resolves from its own folder (itself reached through the links); a hard link names an archive path.
    const parent = resolveThroughLinks(symlinks, [], path.posix.dirname(link.path))
    if (parent === null) return link
    const fromDir = link.type === 'SymbolicLink' && parent !== '.' ? parent.split('/') : []
    if (resolveThroughLinks(symlinks, fromDir, link.target) === null) return link
  }
  return null
}
