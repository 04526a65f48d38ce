/**
 * The archive rules both package kinds share (runtime/archive/safe-unpack.ts): cases the
 * callers' own tests (test/algorithms/packages.unit.test.ts, test/upgrade/package.unit.test.ts)
 * cover for one link policy or one format only.
 */
import { execFileSync } from 'node:child_process'
import { createWriteStream, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { constants, createGzip, gunzipSync } from 'node:zlib'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  inspectTarGz, unpackArchive, type ArchiveFormat, type ArchiveRules, type ArchiveViolation, type TarEntry,
} from '../../runtime/archive/safe-unpack.ts'
import { tarGz, type RawEntry } from '../helpers/tarball.ts'
import { zipOf } from '../helpers/zip.ts'

class Refused extends Error {
  constructor(readonly violation: ArchiveViolation) { super(violation.kind) }
}
const rules = (links: ArchiveRules['links'], skip?: RegExp): ArchiveRules => ({
  limits: { maxEntries: 50, maxExpandedBytes: 1024 * 1024 }, links, skip, refusal: (v) => new Refused(v),
})

let dir: string
let n = 0
beforeEach(() => { dir = mkdtempSync(path.join(tmpdir(), 'safe-unpack-')) })
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const fileOf = (bytes: Buffer) => {
  const file = path.join(dir, `archive-${n++}`)
  writeFileSync(file, bytes)
  return file
}
/** Unpacks into a fresh folder; the violation it was refused with, or the folder. */
async function unpack(bytes: Buffer, format: ArchiveFormat, policy: ArchiveRules) {
  const dest = path.join(dir, `out-${n++}`)
  try {
    await unpackArchive(fileOf(bytes), dest, format, policy)
  } catch (error) {
    if (error instanceof Refused) return { violation: error.violation, written: readdirSync(dest, { recursive: true }) }
    throw error
  }
  return { dest }
}

describe('archive entry rules (runtime/archive)', () => {
  it('without links: hard links, symlinks, devices and FIFOs are refused by type, before anything is written', async () => {
    for (const [type, linkpath] of [['Link', 'a.txt'], ['SymbolicLink', 'a.txt'], ['CharacterDevice', undefined], ['BlockDevice', undefined], ['FIFO', undefined]] as const) {
      const archive = tarGz([{ path: 'a.txt', data: 'a' }, { path: 'x/odd', type, linkpath }])
      expect(await unpack(archive, 'tar.gz', rules('refuse')), type).toEqual({
        violation: { kind: 'entry-type', entry: 'x/odd', type, reason: `entry type ${type} is not allowed` }, written: [],
      })
    }
  })

  it('with links inside: devices and FIFOs are still refused; links that stay inside are written as links', async () => {
    expect((await unpack(tarGz([{ path: 'dev/fifo', type: 'FIFO' }]), 'tar.gz', rules('inside'))).violation).toMatchObject({ kind: 'entry-type', type: 'FIFO' })
    const archive = tarGz([
      { path: 'dist/server.mjs', data: 'code' },
      { path: 'current', type: 'SymbolicLink', linkpath: 'dist/server.mjs' },
      { path: 'dist/same.mjs', type: 'Link', linkpath: 'dist/server.mjs' },
    ])
    const { dest } = await unpack(archive, 'tar.gz', rules('inside'))
    expect(readlinkSync(path.join(dest!, 'current'))).toBe('dist/server.mjs')
    expect(readFileSync(path.join(dest!, 'current'), 'utf8')).toBe('code')
    expect(lstatSync(path.join(dest!, 'dist/same.mjs')).nlink).toBe(2)
  })

  it('paths too long for a tar header (PAX) are checked whole: a traversal at the end is refused', async () => {
    const climbing = `${'a/'.repeat(80)}${'../'.repeat(90)}evil.txt`
    for (const policy of ['refuse', 'inside'] as const) {
      expect(await unpack(tarGz([{ path: climbing, data: 'x' }]), 'tar.gz', rules(policy)), policy).toEqual({
        violation: { kind: 'unsafe-path', entry: climbing, reason: 'absolute or climbing path' }, written: [],
      })
    }
    const target = `${'../'.repeat(60)}etc/passwd`
    expect((await unpack(tarGz([{ path: 'dist/lib', type: 'SymbolicLink', linkpath: target }]), 'tar.gz', rules('inside'))).violation)
      .toEqual({ kind: 'unsafe-link', entry: 'dist/lib', linkpath: target })
  })

  it('long zip names that climb out are refused', async () => {
    const safe = `${'ab/'.repeat(100)}evil.txt`
    const climbing = `${'../'.repeat(100)}evil.txt`
    const zip = Buffer.from((await zipOf({ [safe]: 'x' })).toString('latin1').split(safe).join(climbing), 'latin1')
    expect((await unpack(zip, 'zip', rules('refuse'))).violation).toMatchObject({ kind: 'unsafe-path', reason: 'invalid relative path' })
  })

  it('skipped entries count against the entry bound and are never written, in zip and tar.gz', async () => {
    const skip = /^__MACOSX(\/|$)/
    const zip = await zipOf({ 'a.txt': 'a', '__MACOSX/._a.txt': 'fork' })
    expect(readdirSync((await unpack(zip, 'zip', rules('refuse', skip))).dest!)).toEqual(['a.txt'])
    const tar = tarGz([{ path: 'a.txt', data: 'a' }, { path: '__MACOSX/._a.txt', data: 'fork' }])
    expect(readdirSync((await unpack(tar, 'tar.gz', rules('refuse', skip))).dest!)).toEqual(['a.txt'])
    const tight = { ...rules('refuse', skip), limits: { maxEntries: 1, maxExpandedBytes: 1024 } }
    expect((await unpack(tar, 'tar.gz', tight)).violation).toEqual({ kind: 'too-many-entries', limit: 1 })
  })

  it('reading stops at the first violation: the rest of the archive is not waited for', async () => {
    // A FIFO whose writer never ends: a reader that went on after the violation would hang here.
    const fifo = path.join(dir, 'archive.fifo')
    execFileSync('mkfifo', [fifo])
    const writer = createWriteStream(fifo)
    // The reader closes the FIFO on purpose and the test destroys the writer: a write still in flight then fails (EPIPE, or
    // ERR_STREAM_DESTROYED once destroyed), which is expected here, not an unhandled error.
    writer.on('error', () => {})
    const gzip = createGzip()
    gzip.pipe(writer)
    const entries: RawEntry[] = [{ path: 'ok.txt', data: 'fine' }, { path: '../escape.txt', data: 'x' }, { path: 'after.txt', data: 'never seen' }]
    // The blocks of the three entries without the end-of-archive marker, flushed so they can be inflated.
    const raw = gunzipSync(tarGz(entries))
    gzip.write(raw.subarray(0, raw.length - 1024))
    gzip.flush(constants.Z_SYNC_FLUSH)
    const seen: string[] = []
    try {
      const refused = await inspectTarGz(fifo, rules('refuse'), (entry: TarEntry) => { seen.push(entry.path) }).then(() => null, (e: Refused) => e.violation)
      expect(refused).toEqual({ kind: 'unsafe-path', entry: '../escape.txt', reason: 'absolute or climbing path' })
      expect(seen).toEqual(['ok.txt'])
    } finally {
      writer.destroy()
      gzip.destroy()
    }
  }, 10_000)
})
