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
import { loadTfGraph, type TfGraph } from './tfjs-graph.ts'
import { withInputSize } from './input-size.ts'
import { quantizeQdq, type CalibrationRanges } from './quantize/qdq.ts'

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

/** Hash of the converter's source and calibration ranges (read from the project, so that a bundled copy keys the cache the same way). */
async function converterHash(projectRoot: string): Promise<string> {
  const converterDir = join(projectRoot, 'models/convert')
  const hash = createHash('sha256')
  const walk = async (dir: string): Promise<void> => {
    for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) await walk(path)
      else if (entry.name.endsWith('.ts') || entry.name.endsWith('.json')) hash.update(relative(converterDir, path)).update(await readFile(path))
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

/** The files a source becomes: the model, its other input sizes, and their int8 variants. */
export function modelVariants(source: ModelSource): { file: string; size?: number; int8: boolean }[] {
  const sized = [{ suffix: '', size: undefined as number | undefined }, ...(source.inputSizes?.sizes ?? []).map((size) => ({ suffix: `-${size}`, size }))]
  return sized.flatMap(({ suffix, size }) => [
    { file: `${source.name}${suffix}`, size, int8: false },
    ...(source.int8 ? [{ file: `${source.name}${suffix}-int8`, size, int8: true }] : []),
  ])
}

/** The committed activation ranges of a float model (quantize/calibrate-cli.ts writes them). */
export async function readCalibration(projectRoot: string, file: string): Promise<CalibrationRanges> {
  const path = join(projectRoot, 'models/convert/calibration', `${file}.json`)
  const text = await readFile(path, 'utf8').catch(() => {
    throw new Error(`models/convert: ${relative(projectRoot, path)} is missing: run npx tsx models/convert/quantize/calibrate-cli.ts ${file}`)
  })
  return JSON.parse(text) as CalibrationRanges
}

export async function buildModels(sources: readonly ModelSource[], outDir: string, projectRoot: string): Promise<BuiltModel[]> {
  await mkdir(outDir, { recursive: true })
  const converter = await converterHash(projectRoot)
  const built: BuiltModel[] = []
  let scratchDir: string | undefined
  const scratch = async () => (scratchDir ??= await mkdtemp(join(tmpdir(), 'models-written-')))
  try {
    for (const source of sources) {
      const modelJson = await sourceModelJson(source, projectRoot, scratch)
      const key = `${await sourceHash(modelJson)} ${converter}`
      let graph: TfGraph | undefined
      const float = new Map<string, Uint8Array>()
      for (const variant of modelVariants(source)) {
        const path = join(outDir, `${variant.file}.onnx`)
        const keyPath = `${path}.sha256`
        const previous = await readFile(keyPath, 'utf8').catch(() => '')
        if (previous === key) {
          built.push({ name: variant.file, path, cached: true })
          continue
        }
        const floatFile = variant.file.replace(/-int8$/, '')
        let onnx = float.get(floatFile)
        if (!onnx) {
          graph ??= await loadTfGraph(modelJson)
          const sizedGraph = variant.size && source.inputSizes ? withInputSize(graph, source.name, source.inputSizes, variant.size) : graph
          onnx = convertTfGraph(sizedGraph, source.name, source.descriptor).onnx
          float.set(floatFile, onnx)
        }
        if (variant.int8) onnx = quantizeQdq(onnx, await readCalibration(projectRoot, floatFile))
        // write-then-rename: a stopped build never leaves a half-written model behind
        await writeFile(`${path}.tmp`, onnx)
        await rename(`${path}.tmp`, path)
        await writeFile(keyPath, key)
        built.push({ name: variant.file, path, cached: false })
      }
    }
  } finally {
    if (scratchDir) await rm(scratchDir, { recursive: true, force: true })
  }
  return built
}
