/**
 * Converts the models listed in sources.ts into `<outDir>/<name>.onnx`. A conversion is
 * skipped when `<name>.onnx.sha256` records the same key: the hash of the source model's
 * files and of the converter's own source, so a new package version or a converter change
 * converts again.
 */
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { convertTfGraph } from './convert.ts'
import { writeFaceApiResnetGraph } from './faceapi-resnet.ts'
import { writePresetSignatures } from './preset-signatures.ts'
import { modelSources, type ModelSource } from './sources.ts'
import { loadTfGraph } from './tfjs-graph.ts'

export interface BuiltModel {
  name: string
  path: string
  cached: boolean
}

/** Absolute path of a package's model.json, resolved from the project's node_modules (a written graph has none). */
export function resolveModelJson(source: ModelSource, projectRoot: string): string {
  if (typeof source.modelJson !== 'string') throw new Error(`${source.name}: a graph written in code (${source.modelJson.written}) has no model.json of its package`)
  return createRequire(join(projectRoot, 'package.json')).resolve(source.modelJson)
}

/**
 * The model.json of a source: a package's own, or one a graph writer makes in `scratch`
 * (its weights read in place from the package, so the key below hashes them too).
 */
async function sourceModelJson(source: ModelSource, projectRoot: string, scratch: () => Promise<string>): Promise<string> {
  if (typeof source.modelJson === 'string') return resolveModelJson(source, projectRoot)
  switch (source.modelJson.written) {
    case 'dlib-resnet': return writeFaceApiResnetGraph(projectRoot, join(await scratch(), source.name))
  }
}

/** Hash of the converter's source (read from the project, so that a bundled copy keys the cache the same way). */
async function converterHash(projectRoot: string): Promise<string> {
  const converterDir = join(projectRoot, 'models/convert')
  const hash = createHash('sha256')
  const walk = async (dir: string): Promise<void> => {
    for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) await walk(path)
      else if (entry.name.endsWith('.ts')) hash.update(relative(converterDir, path)).update(await readFile(path))
    }
  }
  await walk(converterDir)
  return hash.digest('hex')
}

async function sourceHash(modelJson: string): Promise<string> {
  const json = await readFile(modelJson)
  const hash = createHash('sha256').update(json)
  const manifest = JSON.parse(json.toString('utf8')) as { weightsManifest: { paths: string[] }[] }
  for (const path of manifest.weightsManifest.flatMap((g) => g.paths)) hash.update(await readFile(join(dirname(modelJson), path)))
  return hash.digest('hex')
}

/** The build step: every model of sources.ts into `<dist>/models/`. */
export async function convertModels({ root, dist }: { root: string; dist: string }): Promise<BuiltModel[]> {
  const started = Date.now()
  const built = await buildModels(modelSources, join(dist, 'models'), root)
  const fresh = built.filter((m) => !m.cached).map((m) => m.name)
  const presets = await writePresetSignatures({ root, dist })
  console.log(`models/convert: ${built.length} models in ${join(dist, 'models')} (${fresh.length ? `converted ${fresh.join(', ')}` : 'all cached'}), ${presets} preset signatures, in ${Date.now() - started} ms`)
  return built
}

export async function buildModels(sources: readonly ModelSource[], outDir: string, projectRoot: string): Promise<BuiltModel[]> {
  await mkdir(outDir, { recursive: true })
  const converter = await converterHash(projectRoot)
  const built: BuiltModel[] = []
  let scratchDir: string | undefined
  const scratch = async () => (scratchDir ??= await mkdtemp(join(tmpdir(), 'models-written-')))
  try {
    for (const source of sources) built.push(await buildModel(source, outDir, projectRoot, converter, scratch))
  } finally {
    if (scratchDir) await rm(scratchDir, { recursive: true, force: true })
  }
  return built
}

async function buildModel(source: ModelSource, outDir: string, projectRoot: string, converter: string, scratch: () => Promise<string>): Promise<BuiltModel> {
  const modelJson = await sourceModelJson(source, projectRoot, scratch)
  const key = `${await sourceHash(modelJson)} ${converter}`
  const path = join(outDir, `${source.name}.onnx`)
  const keyPath = `${path}.sha256`
  const previous = await readFile(keyPath, 'utf8').catch(() => '')
  if (previous === key) return { name: source.name, path, cached: true }
  const { onnx } = convertTfGraph(await loadTfGraph(modelJson), source.name, source.descriptor)
  // write-then-rename: a stopped build never leaves a half-written model behind
  await writeFile(`${path}.tmp`, onnx)
  await rename(`${path}.tmp`, path)
  await writeFile(keyPath, key)
  return { name: source.name, path, cached: false }
}
