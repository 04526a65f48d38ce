import { randomUUID } from 'node:crypto'
import { copyFile, link, mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Readable } from 'node:stream'
import { create } from 'tar'
import yazl from 'yazl'
import type { AlgorithmPackage } from './types.ts'

/**
 * Writers of the algorithm package formats (models/README.md "Algorithm packages"), streamed:
 * - `zip` (`exportSingleAlg`): `manifest.json` at the root, then the package's files;
 * - `tar.gz` (`export`): one `<algorithmId>/` folder per algorithm, laid out the same way.
 * Both are what `/gtw/cwai/Algorithm/upload` takes back.
 */

/**
 * Every entry gets the same time, so exporting the same algorithms twice gives the same bytes:
 * a download resumed with a Range (spec 4.11) continues the file the first request began.
 */
const ENTRY_MTIME = new Date(Date.UTC(2020, 0, 1))

const manifestBytes = (pkg: AlgorithmPackage) => Buffer.from(`${JSON.stringify(pkg.manifest, null, 2)}\n`)

export function zipStream(pkg: AlgorithmPackage): Readable {
  const zip = new yazl.ZipFile()
  zip.addBuffer(manifestBytes(pkg), 'manifest.json', { mtime: ENTRY_MTIME })
  // ONNX weights hardly compress: stored, so a large model streams at disk speed.
  for (const file of pkg.files) zip.addFile(file.path, file.name, { compress: false, mtime: ENTRY_MTIME })
  zip.end()
  return zip.outputStream as Readable
}

/**
 * node-tar names entries by their path under `cwd`, so the packages are laid out in a
 * scratch folder first (files hard-linked, copied across file systems) and the folder is
 * removed once the stream ends, fails or is abandoned.
 */
export async function tarGzStream(packages: AlgorithmPackage[], scratchRoot: string): Promise<Readable> {
  const scratch = path.join(scratchRoot, `algorithm-export-${randomUUID()}`)
  const cleanup = () => rm(scratch, { recursive: true, force: true })
  try {
    for (const pkg of packages) {
      const dir = path.join(scratch, pkg.algorithmId)
      await mkdir(dir, { recursive: true })
      await writeFile(path.join(dir, 'manifest.json'), manifestBytes(pkg))
      for (const file of pkg.files) {
        const target = path.join(dir, file.name)
        await mkdir(path.dirname(target), { recursive: true })
        await link(file.path, target).catch(() => copyFile(file.path, target))
      }
    }
  } catch (error) {
    await cleanup()
    throw error
  }
  const stream = Readable.from(create({ gzip: true, cwd: scratch, portable: true, mtime: ENTRY_MTIME }, packages.map((p) => p.algorithmId)))
  stream.once('close', () => { void cleanup() })
  return stream
}
