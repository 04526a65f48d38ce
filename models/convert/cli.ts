/**
 * Converts the TF.js graph models of sources.ts to ONNX, outside the build (build.mjs runs
 * the same conversion through convertModels()). Run from the project root:
 *   npx tsx models/convert/cli.ts [outDir]   (default dist/models)
 * Exits non-zero, naming the model, node and TF op, when a model cannot be converted.
 */
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildModels } from './build-models.ts'
import { modelSources } from './sources.ts'

const projectRoot = resolve(fileURLToPath(import.meta.url), '../../..')

const outDir = resolve(projectRoot, process.argv[2] ?? 'dist/models')

try {
  const started = Date.now()
  const built = await buildModels(modelSources, outDir, projectRoot)
  for (const m of built) console.log(`models/convert: ${m.name} → ${m.path}${m.cached ? ' (cached)' : ''}`)
  console.log(`models/convert: ${built.length} models in ${Date.now() - started} ms`)
} catch (err) {
  console.error(`models/convert: ${(err as Error).message}`)
  process.exitCode = 1
}
