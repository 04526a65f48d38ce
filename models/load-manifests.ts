import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { checkSchema, formatIssue } from '../shared/schema/validate.ts'
import { PipelineManifest, type FileRef, type ModelPrecision, type ModelSource, type PackageFile } from './manifest-schema.ts'

/**
 * Loads and validates every pipeline manifest of a folder (default `models/manifests`).
 * A manifest that fails validation is a start-up error naming the file and the field: a
 * device never runs a half-understood pipeline.
 */
export interface LoadedManifest {
  manifest: PipelineManifest
  /** Where the manifest came from (a file, or a label such as `layout:<id>`), for messages. */
  file: string
  /** The algorithm package folder that `{ path }` references resolve in (uploaded packages). */
  packageDir?: string
  /**
   * Path of each model file, keyed like `manifest.models`. Package files exist (checked at
   * load); build outputs and operator uploads may not yet: `Pipeline.create` checks them.
   */
  modelPaths: Record<string, string>
  /** Key list file of each `ctc` classifier, by node id (checked at load). */
  keyPaths: Record<string, string>
}

/** Where the device keeps the files it produces; uploaded models live in its `models/`. */
export interface ManifestPaths {
  projectRoot: string
  /** DATA_DIR; without it, uploaded models resolve relative to the working folder's `data/`. */
  dataPath?: string
  /** MODEL_PRECISION: `fp32` loads the float file of every build output, whatever its manifest's `precision`. */
  precision?: 'manifest' | 'fp32'
  /** The package folder of an uploaded algorithm: `{ path }` references resolve inside it. */
  packageDir?: string
}

/**
 * The file a model entry names (models/manifest-schema.ts, ModelEntry.source): a build
 * output with `precision: int8` is `<build>-int8.onnx`, unless MODEL_PRECISION=fp32
 * (`paths.precision`) keeps every model float.
 */
export function modelSourcePath(source: ModelSource, paths: ManifestPaths, precision: ModelPrecision = 'fp32'): string {
  if ('package' in source) return resolvePackageFile(source, paths.projectRoot)
  if ('path' in source) return resolvePackagedFile(source.path, paths)
  if ('build' in source) {
    const int8 = precision === 'int8' && paths.precision !== 'fp32'
    return path.join(paths.projectRoot, 'dist', 'models', `${source.build}${int8 ? '-int8' : ''}.onnx`)
  }
  // runtime/models/register.ts stores operator models as <DATA_DIR>/models/<modelId>.onnx.
  return path.join(paths.dataPath ?? path.resolve('data'), 'models', `${source.uploaded}.onnx`)
}

/** The `models` of a spec 2.3 algorithm row. */
export function modelList(manifest: PipelineManifest): { modelId: string; package: string; file: string; format: string }[] {
  return Object.entries(manifest.models).map(([modelId, e]) => ({ modelId, ...describeModelSource(e.source), format: e.format }))
}

/** A model source as the algorithm registry lists it (spec 2.3 `models`). */
export function describeModelSource(source: ModelSource): { package: string; file: string } {
  if ('package' in source) return { package: source.package, file: source.file }
  if ('path' in source) return { package: '(algorithm package)', file: source.path }
  if ('build' in source) return { package: '(build)', file: `dist/models/${source.build}.onnx` }
  return { package: '(uploaded)', file: `models/${source.uploaded}.onnx` }
}

/**
 * Finds an installed package's folder the way Node resolves packages (walking up the
 * node_modules folders from `projectRoot`), without consulting its `exports` map, which
 * often hides data files such as model weights.
 */
export function packageDir(pkg: string, projectRoot: string): string {
  const require = createRequire(path.join(projectRoot, 'package.json'))
  for (const base of require.resolve.paths(pkg) ?? []) {
    const dir = path.join(base, pkg)
    if (existsSync(path.join(dir, 'package.json'))) return dir
  }
  throw new Error(`package ${pkg} is not installed on the device`)
}

export function resolvePackageFile(ref: PackageFile, projectRoot: string): string {
  const dir = packageDir(ref.package, projectRoot)
  const file = path.resolve(dir, ref.file)
  if (!file.startsWith(dir + path.sep)) throw new Error(`${ref.package}/${ref.file} escapes its package`)
  if (!existsSync(file)) throw new Error(`${ref.package}/${ref.file} is missing (is the package complete?)`)
  return file
}

/** A file of an algorithm package; it must exist and stay inside the package folder. */
function resolvePackagedFile(relative: string, paths: ManifestPaths): string {
  if (!paths.packageDir) throw new Error(`${relative}: package-relative files are only allowed in algorithm packages`)
  const dir = path.resolve(paths.packageDir)
  const file = path.resolve(dir, relative)
  if (!file.startsWith(dir + path.sep)) throw new Error(`${relative} escapes its algorithm package`)
  if (!existsSync(file)) throw new Error(`${relative} is missing from the algorithm package`)
  return file
}

function resolveFileRef(ref: FileRef, paths: ManifestPaths): string {
  return 'package' in ref ? resolvePackageFile(ref, paths.projectRoot) : resolvePackagedFile(ref.path, paths)
}

/** Cross-references the schema cannot express: ids, `from`, `model`, `result.targets`, labels of kept classes. */
function checkGraph(m: PipelineManifest, file: string): void {
  const fail = (why: string) => { throw new Error(`${file}: ${why}`) }
  const seen = new Map<string, string>()
  for (const node of m.nodes) {
    if (seen.has(node.id)) fail(`node id ${node.id} is used twice`)
    if ('model' in node && !(node.model in m.models)) fail(`node ${node.id} names unknown model ${node.model}`)
    if (node.action === 'crop' && seen.get(node.from) !== 'detector') fail(`crop ${node.id} must come after detector ${node.from}`)
    if (node.action === 'classifier' && seen.get(node.from) !== 'crop') fail(`classifier ${node.id} must come after crop ${node.from}`)
    if (node.action === 'recognizer' && node.from !== undefined) {
      const detector = m.nodes.find((n) => n.id === node.from)
      if (seen.get(node.from) !== 'detector' || detector?.action !== 'detector') fail(`recognizer ${node.id} must come after detector ${node.from}`)
      else {
        const keypoints = node.align ? ('kind' in node.align ? node.align.keypoints : node.align.eyes) : []
        if (keypoints.some((k) => !('numKeypoints' in detector.decoder) || k >= detector.decoder.numKeypoints)) fail(`recognizer ${node.id}: detector ${node.from} has no keypoints ${keypoints.join(', ')}`)
      }
      if (node.align && 'kind' in node.align && node.align.keypoints.length !== node.align.template.length) fail(`recognizer ${node.id}: align has ${node.align.keypoints.length} keypoints and ${node.align.template.length} template points`)
      if (node.align && 'kind' in node.align && (node.input.width === undefined || node.input.height === undefined)) fail(`recognizer ${node.id}: a template alignment draws the face at the input's width and height, which it must give`)
    }
    if (node.action === 'recognizer' && node.from === undefined && node.align) fail(`recognizer ${node.id}: align needs a detector (from) with eye keypoints`)
    // `labels` maps class index → label, so a kept class needs its own entry (else the label would read "2").
    if (node.action === 'detector' && 'classes' in node.decoder) {
      const unnamed = (node.decoder.classes ?? []).filter((index) => index >= node.labels.length)
      if (unnamed.length > 0) fail(`detector ${node.id} keeps classes ${unnamed.join(', ')} that labels (${node.labels.length} entries, by class index) does not name`)
    }
    if (node.action === 'detector' && node.inputSizes) {
      if (node.input.width === undefined || node.input.width !== node.input.height) fail(`detector ${node.id}: inputSizes need a square input (width = height)`)
      for (const alt of node.inputSizes) {
        if (!(alt.model in m.models)) fail(`detector ${node.id}: input size ${alt.size} names unknown model ${alt.model}`)
        if (alt.size === node.input.width) fail(`detector ${node.id}: input size ${alt.size} is its own input's`)
      }
      if (new Set(node.inputSizes.map((a) => a.size)).size !== node.inputSizes.length) fail(`detector ${node.id}: an input size is listed twice`)
    }
    seen.set(node.id, node.action)
  }
  // A recognizer without `from` makes one target of the whole image: it can be the result's.
  const targets = m.nodes.find((n) => n.id === m.result.targets)
  if (targets?.action !== 'detector' && !(targets?.action === 'recognizer' && targets.from === undefined))
    fail(`result.targets ${m.result.targets} is not a detector node (or a recognizer of the whole image)`)
  if (m.nodes.filter((n) => n.action === 'logic').length > 1) fail('at most one logic node')
}

/** Schema and graph checks; the error names `label` and the first offending field. */
export function validateManifest(json: unknown, label: string): PipelineManifest {
  const issues = checkSchema(PipelineManifest, json)
  if (issues.length > 0) throw new Error(`${label}: invalid pipeline manifest: ${issues.map(formatIssue).join('; ')}`)
  const manifest = json as PipelineManifest
  checkGraph(manifest, label)
  return manifest
}

/** Resolves every file a valid manifest names (package files and package-relative files must exist). */
export function resolveManifest(manifest: PipelineManifest, label: string, paths: ManifestPaths): LoadedManifest {
  const modelPaths: Record<string, string> = {}
  const keyPaths: Record<string, string> = {}
  try {
    for (const [key, model] of Object.entries(manifest.models)) modelPaths[key] = modelSourcePath(model.source, paths, model.precision)
    for (const node of manifest.nodes)
      if (node.action === 'classifier' && node.head.kind === 'ctc') keyPaths[node.id] = resolveFileRef(node.head.keys, paths)
  } catch (error) {
    throw new Error(`${label}: ${(error as Error).message}`)
  }
  return { manifest, file: label, ...(paths.packageDir ? { packageDir: paths.packageDir } : {}), modelPaths, keyPaths }
}

export function loadManifest(file: string, projectRoot: string, dataPath?: string, precision?: ManifestPaths['precision']): LoadedManifest {
  const manifest = validateManifest(JSON.parse(readFileSync(file, 'utf8')), file)
  return resolveManifest(manifest, file, { projectRoot, ...(dataPath ? { dataPath } : {}), ...(precision ? { precision } : {}) })
}

/** The folder of the manifests shipped with the device. */
export const defaultManifestDir = (projectRoot: string) => path.join(projectRoot, 'models', 'manifests')

export function loadManifests(dir: string, projectRoot: string, dataPath?: string, precision?: ManifestPaths['precision']): Map<string, LoadedManifest> {
  const out = new Map<string, LoadedManifest>()
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.json')).sort()) {
    const loaded = loadManifest(path.join(dir, name), projectRoot, dataPath, precision)
    if (out.has(loaded.manifest.algorithmId)) throw new Error(`${name}: algorithmId ${loaded.manifest.algorithmId} is used twice`)
    out.set(loaded.manifest.algorithmId, loaded)
  }
  return out
}
