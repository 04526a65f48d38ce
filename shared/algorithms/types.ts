import type { PipelineManifest } from '../../models/manifest-schema.ts'

/**
 * The algorithm registry behind `/gtw/cwai/Algorithm/`, `/gtw/cwai/algorithm/`,
 * `/gtw/cwai/algorithm/layout/` and `LoadLocalAlgorithmAction` (spec 4.10, 4.9, 4.2; shapes
 * in models/README.md "Algorithm management"). Implemented by runtime/algorithms/registry.ts,
 * the one owner of the algorithms: handlers and services reach them only as `ctx.algorithms`,
 * never through the `algorithms` table (its projection, see registry.ts). Every change is on
 * disk, in the inference sidecar and then visible here before the call returns, so
 * `PTaskCreate` can use it at once.
 */

/** Where an algorithm comes from: shipped with the device, an uploaded package, or a saved layout. */
export type AlgorithmOrigin = 'preset' | 'package' | 'layout'

export interface AlgorithmEntry {
  manifest: PipelineManifest
  origin: AlgorithmOrigin
  /** Millisecond timestamp of the last change (the start time for presets). */
  updatedAt: number
}

/** The fields of the spec 2.3 row an operator may change without touching the pipeline. */
export interface AlgorithmInfoPatch {
  algorithmName?: string
  algorithmCategory?: string
  supplier?: string
  version?: string
  description?: string
}

/** spec 2.3 algorithm row (as `/gtw/cwai/algorithm/page` answers it) plus where it came from. */
export type AlgorithmRow = {
  algorithmId: string
  algorithmName: string
  algorithmUsage: string
  algorithmCategory: string
  supplier: string
  version: string
  description: string
  runningStatus: number
  models: { modelId: string; package: string; file: string; format: string }[]
  origin: AlgorithmOrigin
  /** Milliseconds, as a string. */
  updateTime: string
}

/** spec 4.2 filters (empty ones select everything); names and suppliers match as substrings. */
export interface AlgorithmPageQuery {
  algorithmUsage?: string
  algorithmName?: string
  supplier?: string
  algorithmId?: string
  algorithmCategory?: string
  /** From 1. */
  pageNum: number
  pageSize: number
}

/** One file of an exported package: its name inside the archive and where it is read from. */
export interface PackageFileEntry { name: string; path: string; size: number }

/** A self-contained algorithm package: `manifest.json` plus the files it names. */
export interface AlgorithmPackage {
  algorithmId: string
  manifest: PipelineManifest
  files: PackageFileEntry[]
}

export interface AlgorithmRegistry {
  get(algorithmId: string): AlgorithmEntry | null
  list(): AlgorithmEntry[]
  /** One page of rows by algorithmId, and how many match in all. */
  page(query: AlgorithmPageQuery): Promise<{ total: number; rows: AlgorithmRow[] }>
  /**
   * Saves a pipeline layout (a manifest without package files; its models name installed
   * packages, build outputs or operator models). `create` refuses an existing id
   * (AlgorithmExists); `upsert` replaces it unless tasks use it (AlgorithmInUse).
   * Invalid layouts answer AlgorithmInvalid with the reason.
   */
  save(manifest: unknown, mode: 'create' | 'upsert'): Promise<{ entry: AlgorithmEntry; created: boolean }>
  updateInfo(algorithmId: string, patch: AlgorithmInfoPatch): Promise<AlgorithmEntry>
  /** AlgorithmNotFound, AlgorithmInUse (a created task uses it). */
  remove(algorithmId: string): Promise<void>
  /**
   * Installs every algorithm of a package archive (zip or tar.gz): checked whole before
   * anything is installed. `replace` lets it overwrite algorithms that exist (not in use).
   */
  installArchive(archivePath: string, options: { replace: boolean }): Promise<AlgorithmEntry[]>
  /** Installs an unpacked package folder (LoadLocalAlgorithmAction); the folder is copied, not moved. */
  installFolder(folder: string, options: { replace: boolean }): Promise<AlgorithmEntry>
  /**
   * What an export of this algorithm contains. Preset model files stay on the device (spec
   * 7.1 DefaultCantBeExport): the manifest names them by package or build output, which every
   * device of this product has; operator models marked exportable and package files travel
   * with it. A non-exportable operator model answers DefaultCantBeExport.
   */
  exportPackage(algorithmId: string): Promise<AlgorithmPackage>
}
