/**
 * The package-install transaction of the algorithm registry (runtime/algorithms/registry.ts):
 * stage a folder, prepare (move into place, define in the sidecar, publish), then finish or
 * undo; restore puts back what a failed install replaced; discard removes a folder in two
 * steps. The registry runs every call inside its one-at-a-time queue and owns the entries:
 * this module changes them only through `publish` and `unpublish`.
 */
import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { link, mkdir, readdir, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { ApiError } from '../../shared/errors/index.ts'
import type { Clock, Logger } from '../../shared/handler.ts'
import type { AlgorithmEntry, AlgorithmOrigin } from '../../shared/algorithms/types.ts'
import type { LoadedManifest } from '../../models/load-manifests.ts'
import type { PipelineManifest } from '../../models/manifest-schema.ts'
import { packageFolders, readPackageManifest } from './package-files.ts'

/** What the registry needs of the inference sidecar (runtime/inference/client.ts). */
export interface AlgorithmSink {
  define(algorithm: LoadedManifest): Promise<void>
  forget(algorithmId: string): Promise<void>
}

/** An active algorithm: its entry and resolved manifest. */
export interface Active { entry: AlgorithmEntry; loaded: LoadedManifest }
interface PreparedCommit { finish(): Promise<AlgorithmEntry>; undo(): Promise<void> }
export type ResolveError = 'AlgorithmInvalid' | 'AlgorithmPackageInvalid'

/** What the transaction needs of the registry that owns the entries. */
export interface InstallOptions {
  /** `<DATA_DIR>/algorithm-packages`. */
  dir: string
  clock: Clock
  log: Logger
  sidecar: AlgorithmSink
  current(algorithmId: string): Active | undefined
  resolve(manifest: PipelineManifest, folder: string, errorId: ResolveError): LoadedManifest
  refuseInUse(algorithmId: string): Promise<void>
  publish(active: Active): Promise<void>
  unpublish(algorithmId: string): Promise<void>
}

export class PackageInstall {
  readonly #o: InstallOptions

  constructor(options: InstallOptions) {
    this.#o = options
  }

  /** Runs `work` in a fresh staging folder (see `stage`), removed afterwards whatever happens. */
  async staged<T>(work: (staging: string) => Promise<T>, from?: string): Promise<T> {
    const staging = await this.stage(from)
    try {
      return await work(staging)
    } finally {
      await rm(staging, { recursive: true, force: true })
    }
  }

  /** A fresh staging folder; with `from`, the package files of an installed algorithm are linked in. */
  async stage(from?: string): Promise<string> {
    const staging = path.join(this.#o.dir, `.staging-${randomUUID()}`)
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
  async installStaged(staging: string, replace: boolean): Promise<AlgorithmEntry[]> {
    const folders = await packageFolders(staging)
    const checked: { folder: string; manifest: PipelineManifest }[] = []
    for (const folder of folders) {
      const manifest = await readPackageManifest(folder)
      this.#o.resolve(manifest, folder, 'AlgorithmPackageInvalid')
      if (checked.some((c) => c.manifest.algorithmId === manifest.algorithmId))
        throw new ApiError('AlgorithmPackageInvalid', { details: { algorithmId: manifest.algorithmId, reason: 'the package holds this algorithm twice' } })
      if (this.#o.current(manifest.algorithmId)) {
        if (!replace) throw new ApiError('AlgorithmExists', { details: { algorithmId: manifest.algorithmId } })
        await this.#o.refuseInUse(manifest.algorithmId)
      }
      checked.push({ folder, manifest })
    }
    // All or nothing: a package of several algorithms is installed whole or not at all.
    const prepared: PreparedCommit[] = []
    try {
      for (const { folder, manifest } of checked) prepared.push(await this.prepare(folder, manifest, 'package'))
    } catch (error) {
      for (const commit of prepared.reverse()) await commit.undo()
      throw error
    }
    return Promise.all(prepared.map((commit) => commit.finish()))
  }

  async commit(staging: string, manifest: PipelineManifest, origin: AlgorithmOrigin): Promise<AlgorithmEntry> {
    return (await this.prepare(staging, manifest, origin)).finish()
  }

  /**
   * Moves a checked folder into place, then row and sidecar; the folder it replaces is kept
   * aside until `finish` (which also updates memory). Anything failing on the way (the
   * sidecar restarting, the disk) is undone here, and `undo` puts back the algorithm as it was.
   */
  async prepare(staging: string, manifest: PipelineManifest, origin: AlgorithmOrigin): Promise<PreparedCommit> {
    const { dir, clock, log, sidecar } = this.#o
    const id = manifest.algorithmId
    const final = path.join(dir, id)
    const previous = this.#o.current(id)
    const aside = existsSync(final) ? path.join(dir, `.previous-${randomUUID()}`) : null
    if (aside) await rename(final, aside)
    const undo = async () => {
      if (existsSync(final)) await this.discard(final)
      if (aside) await rename(aside, final)
      await this.restore(id, previous)
    }
    const entry: AlgorithmEntry = { manifest, origin, updatedAt: clock.now() }
    try {
      await rename(staging, final)
      const loaded = this.#o.resolve(manifest, final, 'AlgorithmInvalid')
      // The sidecar first: an algorithm visible here can be loaded at once.
      await sidecar.define(loaded)
      await this.#o.publish({ entry, loaded })
    } catch (error) {
      await undo()
      throw error
    }
    return {
      undo,
      finish: async () => {
        if (aside) await rm(aside, { recursive: true, force: true })
        log.info({ algorithmId: id, origin }, 'algorithm installed')
        return entry
      },
    }
  }

  /** Puts the entry (table and memory) and sidecar definition back as they were before a failed install (best effort, logged). */
  async restore(algorithmId: string, previous: Active | undefined): Promise<void> {
    try {
      if (previous) {
        await this.#o.publish(previous)
        await this.#o.sidecar.define(previous.loaded)
      } else {
        await this.#o.unpublish(algorithmId)
        await this.#o.sidecar.forget(algorithmId)
      }
    } catch (error) {
      this.#o.log.error({ algorithmId, err: (error as Error).message }, 'could not restore the algorithm after a failed install')
    }
  }

  /** Renames first (one step), then deletes: a crash leaves a `.trash-*` folder that start-up removes. */
  async discard(folder: string): Promise<void> {
    const trash = path.join(this.#o.dir, `.trash-${randomUUID()}`)
    await rename(folder, trash)
    await rm(trash, { recursive: true, force: true })
  }
}
