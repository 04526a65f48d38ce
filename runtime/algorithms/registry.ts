/**
 * One owner for the algorithms: this registry (`ctx.algorithms`). What survives a restart is
 * the truth: the shipped manifests, the package folders under `<DATA_DIR>/algorithm-packages/`,
 * the `removed_preset_algorithms` table, and, of the `algorithms` table, only the origin and
 * update time of each package folder. The rest is derived from them at start: the entries in
 * memory, and the `algorithms` table (spec 2.3 rows) as their projection. Both copies are
 * written here only and together (`#publish`, `#unpublish`: the table in one transaction, then
 * memory), so they cannot tell different stories; handlers and services read through this
 * class (`get`, `list`, `page`), never the table.
 */
import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { constants, copyFile, link, lstat, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { and, asc, count, eq, notInArray, type SQL } from 'drizzle-orm'
import type { Db } from '../../shared/db/client.ts'
import { containsText } from '../../shared/db/like.ts'
import { algorithms, models, removedPresetAlgorithms, tasks } from '../../shared/db/schema/index.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { Clock, Logger } from '../../shared/handler.ts'
import type {
  AlgorithmEntry, AlgorithmInfoPatch, AlgorithmOrigin, AlgorithmPackage, AlgorithmPageQuery, AlgorithmRegistry, AlgorithmRow,
  PackageFileEntry,
} from '../../shared/algorithms/types.ts'
import { algorithmRow } from '../../shared/algorithms/view.ts'
import { loadManifests, resolveManifest, validateManifest, type LoadedManifest } from '../../models/load-manifests.ts'
import type { PipelineManifest } from '../../models/manifest-schema.ts'
import type { ArchiveLimits } from '../../shared/archive/safe-unpack.ts'
import { unpackAlgorithmPackage } from './package-archive.ts'
import { Mutex } from '../../shared/keyed-mutex.ts'

/** What the registry needs of the inference sidecar (runtime/inference/client.ts). */
export interface AlgorithmSink {
  define(algorithm: LoadedManifest): Promise<void>
  forget(algorithmId: string): Promise<void>
}

export interface RegistryOptions {
  db: Db
  projectRoot: string
  dataPath: string
  /** The shipped manifests (models/manifests or MODELS_MANIFEST_DIR). */
  manifestDir: string
  /** MODEL_PRECISION (models/load-manifests.ts, ManifestPaths.precision). */
  precision?: 'manifest' | 'fp32'
  clock: Clock
  log: Logger
  sidecar: AlgorithmSink
  limits: ArchiveLimits
}

interface Active { entry: AlgorithmEntry; loaded: LoadedManifest }
interface PreparedCommit { finish(): Promise<AlgorithmEntry>; undo(): Promise<void> }

export const MANIFEST_FILE = 'manifest.json'
const MANIFEST_MAX_BYTES = 1024 * 1024
/** Package layout: the manifest and, one level deep, `models/*` and `files/*` (models/README.md). */
const PACKAGE_FILE = /^(manifest\.json|(models|files)\/[A-Za-z0-9_][A-Za-z0-9._-]{0,127})$/

/** Installed packages and saved layouts: `<DATA_DIR>/algorithm-packages/<algorithmId>/`. */
export const packagesDirOf = (dataPath: string) => path.join(dataPath, 'algorithm-packages')

/**
 * The algorithm registry (shared/algorithms/types.ts). Shipped manifests are read once;
 * operator algorithms live as package folders on disk, which are the truth at start: memory,
 * the `algorithms` table and the sidecar are brought in line with them. An installed
 * algorithm with a shipped id takes the shipped one's place; a deleted shipped algorithm is
 * remembered in `removed_preset_algorithms`. Changes are serialized.
 */
export class AlgorithmRegistryService implements AlgorithmRegistry {
  readonly #o: RegistryOptions
  readonly #dir: string
  readonly #active = new Map<string, Active>()
  #presets = new Map<string, LoadedManifest>()
  /** Registry changes run one at a time (shared/keyed-mutex.ts). */
  readonly #queue = new Mutex()

  private constructor(options: RegistryOptions) {
    this.#o = options
    this.#dir = packagesDirOf(options.dataPath)
  }

  static async open(options: RegistryOptions): Promise<AlgorithmRegistryService> {
    const registry = new AlgorithmRegistryService(options)
    await registry.#load()
    return registry
  }

  // ── reading ──────────────────────────────────────────────────────────────────────────
  get(algorithmId: string): AlgorithmEntry | null {
    return this.#active.get(algorithmId)?.entry ?? null
  }

  list(): AlgorithmEntry[] {
    return [...this.#active.values()].map((a) => a.entry).sort((a, b) => a.manifest.algorithmId.localeCompare(b.manifest.algorithmId))
  }

  /** spec 4.2: filtered and paged in SQL over the projection, which holds exactly the entries in memory. */
  async page(query: AlgorithmPageQuery): Promise<{ total: number; rows: AlgorithmRow[] }> {
    const conditions: SQL[] = []
    if (query.algorithmUsage) conditions.push(eq(algorithms.algorithmUsage, query.algorithmUsage))
    if (query.algorithmId) conditions.push(eq(algorithms.algorithmId, query.algorithmId))
    if (query.algorithmCategory) conditions.push(eq(algorithms.algorithmCategory, query.algorithmCategory))
    if (query.algorithmName) conditions.push(containsText(algorithms.algorithmName, query.algorithmName))
    if (query.supplier) conditions.push(containsText(algorithms.supplier, query.supplier))
    const where = conditions.length > 0 ? and(...conditions) : undefined
    const { db } = this.#o
    const [{ total } = { total: 0 }] = await db.select({ total: count() }).from(algorithms).where(where)
    const rows = await db.select().from(algorithms).where(where).orderBy(asc(algorithms.algorithmId))
      .limit(query.pageSize).offset((query.pageNum - 1) * query.pageSize)
    // Exactly the fields of algorithmRow (shared/algorithms/view.ts), read back from the projection.
    return { total, rows: rows.map(({ source, updatedAt, ...row }) => ({ ...row, origin: source as AlgorithmOrigin, updateTime: String(updatedAt) })) }
  }

  /** The shipped manifests, resolved (also those an operator deleted or replaced). */
  shipped(): LoadedManifest[] {
    return [...this.#presets.values()]
  }

  /** The resolved manifest (model files) of an active algorithm: the sidecar's and reports' view. */
  loaded(algorithmId: string): LoadedManifest | null {
    return this.#active.get(algorithmId)?.loaded ?? null
  }

  // ── changes ──────────────────────────────────────────────────────────────────────────
  save(json: unknown, mode: 'create' | 'upsert'): Promise<{ entry: AlgorithmEntry; created: boolean }> {
    return this.#exclusive(async () => {
      const manifest = this.#validLayout(json)
      const id = manifest.algorithmId
      const existing = this.#active.get(id)
      if (existing && mode === 'create') throw new ApiError('AlgorithmExists', { details: { algorithmId: id } })
      if (existing) await this.#refuseInUse(id)
      const staging = await this.#stage(existing?.loaded.packageDir)
      try {
        await writeFile(path.join(staging, MANIFEST_FILE), JSON.stringify(manifest, null, 2))
        this.#resolveOrThrow(manifest, staging, 'AlgorithmInvalid')
        const entry = await this.#commit(staging, manifest, 'layout')
        return { entry, created: !existing }
      } finally {
        await rm(staging, { recursive: true, force: true })
      }
    })
  }

  updateInfo(algorithmId: string, patch: AlgorithmInfoPatch): Promise<AlgorithmEntry> {
    return this.#exclusive(async () => {
      const current = this.#require(algorithmId)
      const manifest: PipelineManifest = { ...current.entry.manifest, ...patch }
      // Only the row changes: tasks keep running, no in-use check.
      const staging = await this.#stage(current.loaded.packageDir)
      try {
        await writeFile(path.join(staging, MANIFEST_FILE), JSON.stringify(manifest, null, 2))
        return await this.#commit(staging, manifest, current.entry.origin === 'preset' ? 'layout' : current.entry.origin)
      } finally {
        await rm(staging, { recursive: true, force: true })
      }
    })
  }

  remove(algorithmId: string): Promise<void> {
    return this.#exclusive(async () => {
      const current = this.#require(algorithmId)
      await this.#refuseInUse(algorithmId)
      await this.#o.sidecar.forget(algorithmId)
      if (current.loaded.packageDir) await this.#discard(current.loaded.packageDir)
      await this.#unpublish(algorithmId)
      this.#o.log.info({ algorithmId, origin: current.entry.origin }, 'algorithm deleted')
    })
  }

  installArchive(archivePath: string, options: { replace: boolean }): Promise<AlgorithmEntry[]> {
    return this.#exclusive(async () => {
      const staging = await this.#stage()
      try {
        await unpackAlgorithmPackage(archivePath, staging, this.#o.limits)
        return await this.#installStaged(staging, options.replace)
      } finally {
        await rm(staging, { recursive: true, force: true })
      }
    })
  }

  installFolder(folder: string, options: { replace: boolean }): Promise<AlgorithmEntry> {
    return this.#exclusive(async () => {
      const staging = await this.#stage()
      try {
        await copyPackageFolder(folder, staging, this.#o.limits)
        const [entry] = await this.#installStaged(staging, options.replace)
        return entry!
      } finally {
        await rm(staging, { recursive: true, force: true })
      }
    })
  }

  async exportPackage(algorithmId: string): Promise<AlgorithmPackage> {
    const { entry, loaded } = this.#require(algorithmId)
    const manifest = structuredClone(entry.manifest)
    const files: PackageFileEntry[] = []
    const include = async (name: string, file: string) => {
      const size = await stat(file).then((s) => s.size, () => { throw new ApiError('ModelFileMissing', { details: { algorithmId, file: name } }) })
      files.push({ name, path: file, size })
    }
    for (const [key, model] of Object.entries(manifest.models)) {
      const source = model.source
      if ('uploaded' in source) {
        // spec 7.1 DefaultCantBeExport: an operator's model leaves only when it is marked exportable.
        const [row] = await this.#o.db.select().from(models).where(eq(models.modelId, source.uploaded))
        const reason = !row ? 'not-registered' : row.encrypted ? 'encrypted' : row.deviceBound ? 'device-bound' : !row.exportable ? 'not-exportable' : null
        if (reason === 'not-registered') throw new ApiError('ModelFileMissing', { details: { algorithmId, modelId: source.uploaded } })
        if (reason) throw new ApiError('DefaultCantBeExport', { details: { algorithmId, modelId: source.uploaded, reason } })
        const name = `models/${key}.onnx`
        await include(name, loaded.modelPaths[key]!)
        model.source = { path: name }
      } else if ('path' in source) {
        await include(source.path, loaded.modelPaths[key]!)
      }
      // Shipped model files (npm package, build output) stay: every device of this product has them.
    }
    for (const node of manifest.nodes)
      if (node.action === 'classifier' && node.head.kind === 'ctc' && 'path' in node.head.keys) await include(node.head.keys.path, loaded.keyPaths[node.id]!)
    return { algorithmId, manifest, files }
  }

  // ── internals ────────────────────────────────────────────────────────────────────────
  async #load(): Promise<void> {
    const { db, projectRoot, dataPath, manifestDir, clock, log } = this.#o
    this.#presets = loadManifests(manifestDir, projectRoot, dataPath, this.#o.precision)
    await mkdir(this.#dir, { recursive: true })
    const removed = new Set((await db.select().from(removedPresetAlgorithms)).map((r) => r.algorithmId))
    const rows = new Map((await db.select().from(algorithms)).map((r) => [r.algorithmId, r]))
    const now = clock.now()
    const found = new Map<string, Active>()
    for (const [id, loaded] of this.#presets)
      if (!removed.has(id)) found.set(id, { entry: { manifest: loaded.manifest, origin: 'preset', updatedAt: now }, loaded })
    for (const name of (await readdir(this.#dir)).sort()) {
      const folder = path.join(this.#dir, name)
      // Leftovers of an interrupted change (staging or discarded folders) are removed.
      if (name.startsWith('.')) { await rm(folder, { recursive: true, force: true }); continue }
      try {
        const manifest = validateManifest(JSON.parse(await readFile(path.join(folder, MANIFEST_FILE), 'utf8')), `${name}/${MANIFEST_FILE}`)
        if (manifest.algorithmId !== name) throw new Error(`folder ${name} holds algorithm ${manifest.algorithmId}`)
        const loaded = resolveManifest(manifest, folder, { projectRoot, dataPath, packageDir: folder, ...(this.#o.precision ? { precision: this.#o.precision } : {}) })
        const row = rows.get(name)
        const origin: AlgorithmOrigin = row?.source === 'layout' ? 'layout' : 'package'
        // Whole milliseconds, as the table stores them: every route answers the same updateTime.
        const updatedAt = row?.updatedAt ?? Math.round((await stat(folder)).mtimeMs)
        found.set(name, { entry: { manifest, origin, updatedAt }, loaded })
      } catch (error) {
        // One broken package does not keep the device down; it is reported and left on disk.
        log.error({ folder: name, err: (error as Error).message }, 'installed algorithm package is invalid; not offered')
      }
    }
    for (const active of found.values()) await this.#publish(active)
    const ids = [...this.#active.keys()]
    await db.delete(algorithms).where(ids.length > 0 ? notInArray(algorithms.algorithmId, ids) : undefined)
    for (const { loaded } of this.#active.values()) await this.#o.sidecar.define(loaded)
  }

  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.#queue.run(work)
  }

  #require(algorithmId: string): Active {
    const active = this.#active.get(algorithmId)
    if (!active) throw new ApiError('AlgorithmNotFound', { details: { algorithmId } })
    return active
  }

  async #refuseInUse(algorithmId: string): Promise<void> {
    const using = await this.#o.db.select({ taskId: tasks.taskId }).from(tasks)
      .where(and(eq(tasks.algorithmCode, algorithmId), eq(tasks.state, 'created')))
    if (using.length > 0) throw new ApiError('AlgorithmInUse', { details: { algorithmId, taskIds: using.map((t) => t.taskId) } })
  }

  #validLayout(json: unknown): PipelineManifest {
    try {
      return validateManifest(json, 'layout')
    } catch (error) {
      throw new ApiError('AlgorithmInvalid', { details: { reason: (error as Error).message.replace(/^layout: /, '').slice(0, 500) } })
    }
  }

  #resolveOrThrow(manifest: PipelineManifest, folder: string, errorId: 'AlgorithmInvalid' | 'AlgorithmPackageInvalid'): LoadedManifest {
    try {
      return resolveManifest(manifest, manifest.algorithmId, { projectRoot: this.#o.projectRoot, dataPath: this.#o.dataPath, packageDir: folder, ...(this.#o.precision ? { precision: this.#o.precision } : {}) })
    } catch (error) {
      throw new ApiError(errorId, { details: { algorithmId: manifest.algorithmId, reason: (error as Error).message.replace(/^[^:]*: /, '').slice(0, 500) } })
    }
  }

  /** A fresh staging folder; with `from`, the package files of an installed algorithm are linked in. */
  async #stage(from?: string): Promise<string> {
    const staging = path.join(this.#dir, `.staging-${randomUUID()}`)
    await mkdir(staging)
    if (from) {
      for (const sub of ['models', 'files']) {
        const names = await readdir(path.join(from, sub)).catch(() => [] as string[])
        if (names.length > 0) await mkdir(path.join(staging, sub))
        for (const name of names) await link(path.join(from, sub, name), path.join(staging, sub, name))
      }
    }
    return staging
  }

  /** Checks every algorithm folder of an unpacked package, then installs them all. */
  async #installStaged(staging: string, replace: boolean): Promise<AlgorithmEntry[]> {
    const folders = await packageFolders(staging)
    const checked: { folder: string; manifest: PipelineManifest }[] = []
    for (const folder of folders) {
      const manifest = await readPackageManifest(folder)
      this.#resolveOrThrow(manifest, folder, 'AlgorithmPackageInvalid')
      if (checked.some((c) => c.manifest.algorithmId === manifest.algorithmId))
        throw new ApiError('AlgorithmPackageInvalid', { details: { algorithmId: manifest.algorithmId, reason: 'the package holds this algorithm twice' } })
      if (this.#active.has(manifest.algorithmId)) {
        if (!replace) throw new ApiError('AlgorithmExists', { details: { algorithmId: manifest.algorithmId } })
        await this.#refuseInUse(manifest.algorithmId)
      }
      checked.push({ folder, manifest })
    }
    // All or nothing: a package of several algorithms is installed whole or not at all.
    const prepared: PreparedCommit[] = []
    try {
      for (const { folder, manifest } of checked) prepared.push(await this.#prepare(folder, manifest, 'package'))
    } catch (error) {
      for (const commit of prepared.reverse()) await commit.undo()
      throw error
    }
    return Promise.all(prepared.map((commit) => commit.finish()))
  }

  async #commit(staging: string, manifest: PipelineManifest, origin: AlgorithmOrigin): Promise<AlgorithmEntry> {
    return (await this.#prepare(staging, manifest, origin)).finish()
  }

  /**
   * Moves a checked folder into place, then row and sidecar; the folder it replaces is kept
   * aside until `finish` (which also updates memory). Anything failing on the way (the
   * sidecar restarting, the disk) is undone here, and `undo` puts back the algorithm as it was.
   */
  async #prepare(staging: string, manifest: PipelineManifest, origin: AlgorithmOrigin): Promise<PreparedCommit> {
    const id = manifest.algorithmId
    const final = path.join(this.#dir, id)
    const previous = this.#active.get(id)
    const aside = existsSync(final) ? path.join(this.#dir, `.previous-${randomUUID()}`) : null
    if (aside) await rename(final, aside)
    const undo = async () => {
      if (existsSync(final)) await this.#discard(final)
      if (aside) await rename(aside, final)
      await this.#restore(id, previous)
    }
    const entry: AlgorithmEntry = { manifest, origin, updatedAt: this.#o.clock.now() }
    try {
      await rename(staging, final)
      const loaded = this.#resolveOrThrow(manifest, final, 'AlgorithmInvalid')
      // The sidecar first: an algorithm visible here can be loaded at once.
      await this.#o.sidecar.define(loaded)
      await this.#publish({ entry, loaded })
    } catch (error) {
      await undo()
      throw error
    }
    return {
      undo,
      finish: async () => {
        if (aside) await rm(aside, { recursive: true, force: true })
        this.#o.log.info({ algorithmId: id, origin }, 'algorithm installed')
        return entry
      },
    }
  }

  /** Puts the entry (table and memory) and sidecar definition back as they were before a failed install (best effort, logged). */
  async #restore(algorithmId: string, previous: Active | undefined): Promise<void> {
    try {
      if (previous) {
        await this.#publish(previous)
        await this.#o.sidecar.define(previous.loaded)
      } else {
        await this.#unpublish(algorithmId)
        await this.#o.sidecar.forget(algorithmId)
      }
    } catch (error) {
      this.#o.log.error({ algorithmId, err: (error as Error).message }, 'could not restore the algorithm after a failed install')
    }
  }

  /** Renames first (one step), then deletes: a crash leaves a `.trash-*` folder that start-up removes. */
  async #discard(folder: string): Promise<void> {
    const trash = path.join(this.#dir, `.trash-${randomUUID()}`)
    await rename(folder, trash)
    await rm(trash, { recursive: true, force: true })
  }

  /** Makes an entry visible: its row (and no removal mark) in one transaction, then memory. */
  async #publish(active: Active): Promise<void> {
    const id = active.entry.manifest.algorithmId
    const row = rowOf(active.entry)
    await this.#o.db.transaction(async (tx) => {
      await tx.insert(algorithms).values(row).onConflictDoUpdate({ target: algorithms.algorithmId, set: row })
      await tx.delete(removedPresetAlgorithms).where(eq(removedPresetAlgorithms.algorithmId, id))
    })
    this.#active.set(id, active)
  }

  /** Takes an entry away: its row in one transaction with the removal mark of a shipped one, then memory. */
  async #unpublish(algorithmId: string): Promise<void> {
    await this.#o.db.transaction(async (tx) => {
      await tx.delete(algorithms).where(eq(algorithms.algorithmId, algorithmId))
      if (this.#presets.has(algorithmId))
        await tx.insert(removedPresetAlgorithms).values({ algorithmId, removedAt: this.#o.clock.now() }).onConflictDoNothing()
    })
    this.#active.delete(algorithmId)
  }
}

/** The projection of an entry: its spec 2.3 row as every route answers it, stored. */
function rowOf(entry: AlgorithmEntry): typeof algorithms.$inferInsert {
  const { origin, updateTime: _, ...row } = algorithmRow(entry)
  return { ...row, source: origin, updatedAt: entry.updatedAt }
}

/** The algorithm folders of an unpacked package: its root, or each top-level folder (several algorithms). */
async function packageFolders(root: string): Promise<string[]> {
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

async function readPackageManifest(folder: string): Promise<PipelineManifest> {
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
async function copyPackageFolder(from: string, to: string, limits: ArchiveLimits): Promise<void> {
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
