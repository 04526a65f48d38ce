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
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { and, asc, count, eq, notInArray, type SQL } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { containsText } from '../db/like.ts'
import { algorithms, removedPresetAlgorithms, tasks } from '../../shared/db/schema/index.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { Clock, Logger } from '../../shared/handler.ts'
import type {
  AlgorithmEntry, AlgorithmInfoPatch, AlgorithmOrigin, AlgorithmPackage, AlgorithmPageQuery, AlgorithmRegistry, AlgorithmRow,
} from '../../shared/algorithms/types.ts'
import { algorithmRow } from '../../shared/algorithms/view.ts'
import { loadManifests, resolveManifest, validateManifest, type LoadedManifest } from '../../models/load-manifests.ts'
import type { PipelineManifest } from '../../models/manifest-schema.ts'
import type { ArchiveLimits } from '../archive/safe-unpack.ts'
import { unpackAlgorithmPackage } from './package-archive.ts'
import { Mutex } from '../keyed-mutex.ts'
import { exportAlgorithmPackage } from './export-policy.ts'
import { PackageInstall, type Active, type AlgorithmSink, type ResolveError } from './install.ts'
import { copyPackageFolder, MANIFEST_FILE } from './package-files.ts'

export type { AlgorithmSink } from './install.ts'
export { MANIFEST_FILE } from './package-files.ts'

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
  /** Registry changes run one at a time (runtime/keyed-mutex.ts). */
  readonly #queue = new Mutex()

  /** The package-install transaction (runtime/algorithms/install.ts), run inside `#exclusive`. */
  readonly #install: PackageInstall

  private constructor(options: RegistryOptions) {
    this.#o = options
    this.#dir = packagesDirOf(options.dataPath)
    this.#install = new PackageInstall({
      dir: this.#dir, clock: options.clock, log: options.log, sidecar: options.sidecar,
      current: (id) => this.#active.get(id),
      resolve: (manifest, folder, errorId) => this.#resolveOrThrow(manifest, folder, errorId),
      refuseInUse: (id) => this.#refuseInUse(id),
      publish: (active) => this.#publish(active),
      unpublish: (id) => this.#unpublish(id),
    })
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
      return this.#install.staged(async (staging) => {
        await writeFile(path.join(staging, MANIFEST_FILE), JSON.stringify(manifest, null, 2))
        this.#resolveOrThrow(manifest, staging, 'AlgorithmInvalid')
        const entry = await this.#install.commit(staging, manifest, 'layout')
        return { entry, created: !existing }
      }, existing?.loaded.packageDir)
    })
  }

  updateInfo(algorithmId: string, patch: AlgorithmInfoPatch): Promise<AlgorithmEntry> {
    return this.#exclusive(async () => {
      const current = this.#require(algorithmId)
      const manifest: PipelineManifest = { ...current.entry.manifest, ...patch }
      // Only the row changes: tasks keep running, no in-use check.
      return this.#install.staged(async (staging) => {
        await writeFile(path.join(staging, MANIFEST_FILE), JSON.stringify(manifest, null, 2))
        return this.#install.commit(staging, manifest, current.entry.origin === 'preset' ? 'layout' : current.entry.origin)
      }, current.loaded.packageDir)
    })
  }

  remove(algorithmId: string): Promise<void> {
    return this.#exclusive(async () => {
      const current = this.#require(algorithmId)
      await this.#refuseInUse(algorithmId)
      await this.#o.sidecar.forget(algorithmId)
      if (current.loaded.packageDir) await this.#install.discard(current.loaded.packageDir)
      await this.#unpublish(algorithmId)
      this.#o.log.info({ algorithmId, origin: current.entry.origin }, 'algorithm deleted')
    })
  }

  installArchive(archivePath: string, options: { replace: boolean }): Promise<AlgorithmEntry[]> {
    return this.#exclusive(() => this.#install.staged(async (staging) => {
      await unpackAlgorithmPackage(archivePath, staging, this.#o.limits)
      return this.#install.installStaged(staging, options.replace)
    }))
  }

  installFolder(folder: string, options: { replace: boolean }): Promise<AlgorithmEntry> {
    return this.#exclusive(() => this.#install.staged(async (staging) => {
      await copyPackageFolder(folder, staging, this.#o.limits)
      const [entry] = await this.#install.installStaged(staging, options.replace)
      return entry!
    }))
  }

  /** The package of an algorithm under the export policy (runtime/algorithms/export-policy.ts). */
  async exportPackage(algorithmId: string): Promise<AlgorithmPackage> {
    const { entry, loaded } = this.#require(algorithmId)
    return exportAlgorithmPackage(this.#o.db, entry, loaded)
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

  #resolveOrThrow(manifest: PipelineManifest, folder: string, errorId: ResolveError): LoadedManifest {
    try {
      return resolveManifest(manifest, manifest.algorithmId, { projectRoot: this.#o.projectRoot, dataPath: this.#o.dataPath, packageDir: folder, ...(this.#o.precision ? { precision: this.#o.precision } : {}) })
    } catch (error) {
      throw new ApiError(errorId, { details: { algorithmId: manifest.algorithmId, reason: (error as Error).message.replace(/^[^:]*: /, '').slice(0, 500) } })
    }
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
