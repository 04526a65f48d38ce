/**
 * Reading an algorithm package (models/README.md "Algorithm management"): which folders of an
 * unpacked package are algorithms, that each holds only the allowed files, its manifest, and
 * the copy of an unpacked folder (LoadLocalAlgorithmAction) into staging.
 */
import { existsSync } from 'node:fs'
import { constants, copyFile, lstat, mkdir, readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { ApiError } from '../../shared/errors/index.ts'
import { validateManifest } from '../../models/load-manifests.ts'
import type { PipelineManifest } from '../../models/manifest-schema.ts'
import type { ArchiveLimits } from '../archive/safe-unpack.ts'

export const MANIFEST_FILE = 'manifest.json'
const MANIFEST_MAX_BYTES = 1024 * 1024
/** Package layout: the manifest and, one level deep, `models/*` and `files/*` (models/README.md). */
const PACKAGE_FILE = /^(manifest\.json|(models|files)\/[A-Za-z0-9_][A-Za-z0-9._-]{0,127})$/

/** The algorithm folders of an unpacked package: its root, or each top-level folder (several algorithms). */
export async function packageFolders(root: string): Promise<string[]> {
  if (existsSync(path.join(root, MANIFEST_FILE))) {
    await checkPackageLayout(root, '')
    return [root]
  }
  const top = await readdir(root, { withFileTypes: true })
  const folders: string[] = []
  for (const item of top) {
    if (!item.isDirectory() || !existsSync(path.join(root, item.name, MANIFEST_FILE)))
      throw new ApiError('AlgorithmPackageInvalid', { details: { entry: item.name, reason: `expected ${MANIFEST_FILE} at the root, or one folder with a ${MANIFEST_FILE} per algorithm` } })
    await checkPackageLayout(path.join(root, item.name), `${item.name}/`)
    folders.push(path.join(root, item.name))
  }
  if (folders.length === 0) throw new ApiError('AlgorithmPackageInvalid', { details: { reason: `no ${MANIFEST_FILE} in the package` } })
  return folders
}

/** Only `manifest.json`, `models/<file>` and `files/<file>`: nothing else is installed. */
async function checkPackageLayout(folder: string, prefix: string): Promise<void> {
  for (const relative of await listFiles(folder)) {
    if (!PACKAGE_FILE.test(relative))
      throw new ApiError('AlgorithmPackageInvalid', { details: { entry: `${prefix}${relative}`.slice(0, 512), reason: 'a package holds only manifest.json, models/<file> and files/<file>' } })
  }
}

async function listFiles(folder: string, base = ''): Promise<string[]> {
  const out: string[] = []
  for (const item of await readdir(path.join(folder, base), { withFileTypes: true })) {
    const relative = base ? `${base}/${item.name}` : item.name
    if (item.isDirectory()) out.push(...await listFiles(folder, relative))
    else out.push(relative)
  }
  return out
}

export async function readPackageManifest(folder: string): Promise<PipelineManifest> {
  const file = path.join(folder, MANIFEST_FILE)
  if ((await stat(file)).size > MANIFEST_MAX_BYTES) throw new ApiError('AlgorithmPackageInvalid', { details: { reason: 'manifest.json is larger than 1 MB' } })
  let json: unknown
  try {
    json = JSON.parse(await readFile(file, 'utf8'))
  } catch {
    throw new ApiError('AlgorithmPackageInvalid', { details: { reason: 'manifest.json is not valid JSON' } })
  }
  try {
    return validateManifest(json, MANIFEST_FILE)
  } catch (error) {
    throw new ApiError('AlgorithmPackageInvalid', { details: { reason: (error as Error).message.slice(0, 500) } })
  }
}

/**
 * Copies an unpacked package folder (LoadLocalAlgorithmAction) into staging: regular files
 * and folders only — a link is refused, so nothing outside the folder is ever read.
 */
export async function copyPackageFolder(from: string, to: string, limits: ArchiveLimits): Promise<void> {
  let entries = 0
  let bytes = 0
  const walk = async (relative: string) => {
    for (const name of await readdir(path.join(from, relative))) {
      const child = relative ? `${relative}/${name}` : name
      const info = await lstat(path.join(from, child))
      if (++entries > limits.maxEntries) throw new ApiError('AlgorithmPackageTooLarge', { details: { limitEntries: limits.maxEntries } })
      if (info.isDirectory()) { await mkdir(path.join(to, child)); await walk(child); continue }
      if (!info.isFile()) throw new ApiError('AlgorithmPackageUnsafe', { details: { entry: child, reason: 'not a regular file (link or device)' } })
      bytes += info.size
      if (bytes > limits.maxExpandedBytes) throw new ApiError('AlgorithmPackageTooLarge', { details: { limitBytes: String(limits.maxExpandedBytes) } })
      await copyFile(path.join(from, child), path.join(to, child), constants.COPYFILE_EXCL)
    }
  }
  await walk('')
}
