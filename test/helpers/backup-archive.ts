import { createHash } from 'node:crypto'
import { gunzipSync } from 'node:zlib'
import { Parser, type ReadEntry } from 'tar'
import { deriveKeys, signManifest } from '../../runtime/backup/codec.ts'
import type { Manifest } from '../../runtime/backup/manifest.ts'
import { tarGz, type RawEntry } from './tarball.ts'

/** The regular entries of a (small) backup archive, path → bytes, in archive order. */
export async function readArchive(bytes: Buffer): Promise<Map<string, Buffer>> {
  const entries = new Map<string, Buffer>()
  const parser = new Parser({ strict: true })
  parser.on('entry', (entry: ReadEntry) => {
    const chunks: Buffer[] = []
    entry.on('data', (chunk: Buffer) => chunks.push(chunk))
    entry.on('end', () => { if (entry.type === 'File') entries.set(entry.path, Buffer.concat(chunks)) })
  })
  await new Promise<void>((resolve, reject) => {
    parser.on('error', reject)
    parser.on('close', () => resolve())
    parser.end(gunzipSync(bytes))
  })
  return entries
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')

export const manifestOf = (entries: Map<string, Buffer>): Manifest => JSON.parse(entries.get('manifest.json')!.toString('utf8'))

/**
 * Rewrites a backup as a writer with the passphrase would: `change` edits the entries and the
 * manifest, then every table's and file's size and checksum is computed again from the
 * entries and the manifest signed. A damage that is to stay visible is made after this.
 */
export async function resign(entries: Map<string, Buffer>, passphrase: string, change: (manifest: Manifest, entries: Map<string, Buffer>) => void = () => undefined): Promise<Map<string, Buffer>> {
  const out = new Map(entries)
  const manifest = manifestOf(out)
  change(manifest, out)
  for (const table of manifest.tables) {
    const data = out.get(table.entry) ?? Buffer.alloc(0)
    Object.assign(table, { bytes: data.length, sha256: sha256(data), rows: data.toString('utf8').split('\n').filter(Boolean).length })
  }
  for (const file of manifest.files) {
    const data = out.get(file.path) ?? Buffer.alloc(0)
    Object.assign(file, { bytes: data.length, sha256: sha256(data) })
  }
  const bytes = Buffer.from(JSON.stringify(manifest))
  out.set('manifest.json', bytes)
  out.set('manifest.sig', Buffer.from(signManifest(bytes, await deriveKeys(passphrase, manifest.kdf))))
  return out
}

/** A tar.gz of the entries (and any raw entries: links, climbing paths) as they are. */
export const archiveOf = (entries: Map<string, Buffer>, extra: RawEntry[] = []): Buffer =>
  tarGz([...[...entries].map(([path, data]) => ({ path, data })), ...extra])

/** The rows of a table entry, parsed. */
export const rowsOf = (entries: Map<string, Buffer>, table: string): Record<string, unknown>[] =>
  (entries.get(`db/${table}.jsonl`)?.toString('utf8') ?? '').split('\n').filter(Boolean).map((line) => JSON.parse(line))

export const jsonl = (rows: unknown[]) => Buffer.from(rows.map((r) => `${JSON.stringify(r)}\n`).join(''))
