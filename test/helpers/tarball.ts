import { createHash } from 'node:crypto'
import { createWriteStream, writeFileSync } from 'node:fs'
import path from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGzip, gzipSync } from 'node:zlib'
import { Header, Pax } from 'tar'

/** One raw tar entry: anything a hostile archive may hold (absolute paths, `..`, links, devices). */
export interface RawEntry {
  path: string
  type?: 'File' | 'Directory' | 'SymbolicLink' | 'Link' | 'CharacterDevice' | 'BlockDevice' | 'FIFO'
  data?: Buffer | string
  linkpath?: string
}

/**
 * Writes tar headers by hand (node-tar's Header) so tests can build archives tar itself refuses
 * to make; a path or link target too long for the header goes in a PAX extended header before it.
 */
export function tarGz(entries: RawEntry[]): Buffer {
  const blocks: Buffer[] = []
  for (const entry of entries) {
    const data = entry.data === undefined ? Buffer.alloc(0) : Buffer.from(entry.data)
    const header = new Header({ path: entry.path, type: entry.type ?? 'File', size: data.length, linkpath: entry.linkpath, mode: entry.type === 'Directory' ? 0o755 : 0o644, mtime: new Date(0), uid: 0, gid: 0 })
    const block = Buffer.alloc(512)
    if (header.encode(block, 0)) blocks.push(new Pax({ path: entry.path, linkpath: entry.linkpath }).encode())
    blocks.push(block, data, Buffer.alloc((512 - (data.length % 512)) % 512))
  }
  blocks.push(Buffer.alloc(1024))
  return gzipSync(Buffer.concat(blocks))
}

const MB_OF_ZEROS = Buffer.alloc(1024 * 1024)

/** `bytes` zeros in pieces of at most 1 MB, for archives streamed without holding them. */
export function* zeros(bytes: number): Generator<Buffer> {
  for (let left = bytes; left > 0; left -= MB_OF_ZEROS.length) yield MB_OF_ZEROS.subarray(0, Math.min(left, MB_OF_ZEROS.length))
}

/** A zero-filled entry of a streamed tar.gz; `ExtendedHeader` is a PAX record node-tar skips when it is over 1 MB. */
export interface ZeroEntry {
  path: string
  size: number
  type?: 'File' | 'ExtendedHeader'
}

/**
 * Writes a tar.gz of zero-filled entries (decompression bombs) by streaming zeros through a
 * gzip stream into `file`, never holding the archive in memory; `trailing` zero bytes follow
 * the end-of-archive marker.
 */
export async function writeZerosTarGz(file: string, entries: ZeroEntry[], options: { level?: number; trailing?: number } = {}): Promise<void> {
  function* blocks() {
    for (const entry of entries) {
      const block = Buffer.alloc(512)
      new Header({ path: entry.path, type: entry.type ?? 'File', size: entry.size, mode: 0o644, mtime: new Date(0), uid: 0, gid: 0 }).encode(block, 0)
      yield block
      yield* zeros(Math.ceil(entry.size / 512) * 512)
    }
    yield* zeros(1024 + (options.trailing ?? 0))
  }
  await pipeline(Readable.from(blocks()), createGzip({ level: options.level ?? 9 }), createWriteStream(file))
}

export const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex')
export const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex')

export interface PackageOptions {
  product?: string
  version?: string
  /** Regular files of the package (path → content); the manifest lists them all. */
  files?: Record<string, string | Buffer>
  entryPoint?: string
  /** Extra entries added after the files, not listed in the manifest. */
  extra?: RawEntry[]
  /** Replaces the manifest (null: no manifest at all). */
  manifest?: unknown
  /** Name the package with this MD5 instead of the real one. */
  md5?: string
}

/** A complete upgrade package in `dir`, named `<product>-V<version>-<md5>.tar.gz`; returns its path and name. */
export function writePackage(dir: string, options: PackageOptions = {}) {
  const product = options.product ?? 'EdgeAIDevice'
  const version = options.version ?? '2.0.0'
  const files = options.files ?? { 'dist/runtime/server.mjs': 'console.log("new version")\n', 'package.json': JSON.stringify({ version }) }
  const entryPoint = options.entryPoint ?? 'dist/runtime/server.mjs'
  const manifest = options.manifest === undefined
    ? { product, version, entryPoint, files: Object.fromEntries(Object.entries(files).map(([p, d]) => [p, sha256(d)])) }
    : options.manifest
  const entries: RawEntry[] = [
    ...(manifest === null ? [] : [{ path: 'manifest.json', data: JSON.stringify(manifest) }]),
    ...Object.entries(files).map(([p, data]) => ({ path: p, data })),
    ...(options.extra ?? []),
  ]
  const bytes = tarGz(entries)
  const name = `${product}-V${version}-${options.md5 ?? md5(bytes)}.tar.gz`
  const file = path.join(dir, name)
  writeFileSync(file, bytes)
  return { file, name, bytes }
}
