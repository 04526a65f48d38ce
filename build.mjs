// Builds the device with esbuild:
//   - every functions/**/*.ts into its own bundle dist/functions/<category>/<Endpoint>.mjs
//     (shared/ inlined into each, npm packages external), plus dist/functions/manifest.json;
//   - the runtime entries listed in RUNTIME_ENTRIES.
// `--outdir DIR` builds into DIR instead of dist/.
// `node build.mjs --only aihost/Probe` rebuilds one handler bundle (hot redeploy).
// `node build.mjs --release` then packs the linux-x64 release and its upgrade package (infra/release/build.mjs).
// Files are written to a temporary name and renamed, so a running runtime never reads half a bundle.
import { build } from 'esbuild'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { buildDocs } from './runtime/docs/step.mjs'
import { buildCli } from './runtime/cli/step.mjs'
import { buildConsole } from './runtime/console/step.mjs'
import { writeClientApi } from './runtime/client/generate-api.mjs'
import { buildRelease } from './infra/release/build.mjs'

const root = path.dirname(fileURLToPath(import.meta.url))
// The converter opens models in this process: no onnxruntime telemetry (docs/deployment.md, "What the device writes").
process.env.ORT_DISABLE_TELEMETRY ??= '1'
const outdirIndex = process.argv.indexOf('--outdir')
const dist = outdirIndex === -1 ? path.join(root, 'dist') : path.resolve(process.argv[outdirIndex + 1])
const functionsOut = path.join(dist, 'functions')

/** Runtime processes, built whole; `optional` entries are skipped while their source is absent. */
const RUNTIME_ENTRIES = [
  // `precompiledSchemas`: its shared/schema/precompiled.ts is generated (runtime/schema/precompile.ts).
  { source: 'runtime/server.ts', out: 'runtime/server.mjs', precompiledSchemas: true },
  { source: 'runtime/sidecar/main.ts', out: 'runtime/sidecar.mjs', optional: true },
  { source: 'runtime/supervisor/main.ts', out: 'runtime/supervisor.mjs' },
]

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  // Beside each bundle (`<bundle>.map`), not inline: every start reads, decodes and compiles
  // the server and its ~180 handler bundles, and inline maps made them 4 times larger
  // (bench/README.md, device-start).
  sourcemap: 'linked',
  write: false,
  logLevel: 'warning',
}

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex')

function writeAtomically(file, contents) {
  mkdirSync(path.dirname(file), { recursive: true })
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, contents)
  renameSync(temporary, file)
}

function listHandlers(dir = path.join(root, 'functions')) {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return listHandlers(full)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : []
  })
}

const bundleName = (source) => path.relative(path.join(root, 'functions'), source).replace(/\.ts$/, '.mjs').split(path.sep).join('/')

async function buildHandlers(sources) {
  const result = await build({ ...common, entryPoints: sources, outdir: functionsOut, outbase: path.join(root, 'functions'), outExtension: { '.js': '.mjs' } })
  for (const file of result.outputFiles) writeAtomically(file.path, file.contents)
}

/** Reads each bundle's definition to record routes, auth and body kind in the manifest. */
async function writeManifest(sources, complete = true) {
  const bundles = {}
  const routes = {}
  for (const source of sources.sort()) {
    const bundle = bundleName(source)
    const file = path.join(functionsOut, bundle)
    const bytes = readFileSync(file)
    const hash = sha256(bytes)
    const definition = (await import(`${pathToFileURL(file).href}?v=${hash}`)).default
    if (!definition?.routes || typeof definition.handle !== 'function') throw new Error(`${source} does not default-export defineHandler({...})`)
    const methods = definition.methods ?? ['POST']
    // The route table mounts the routes from here and imports a bundle at its first request (runtime/http/route-table.ts).
    bundles[bundle] = { source: path.relative(root, source), hash, routes: definition.routes, methods, auth: definition.auth, body: definition.body, summary: definition.summary }
    for (const route of definition.routes) {
      if (routes[route]) throw new Error(`route ${route} is defined twice: ${routes[route].bundle} and ${bundle}`)
      routes[route] = { bundle, auth: definition.auth, body: definition.body, methods, hash }
    }
  }
  writeAtomically(path.join(functionsOut, 'manifest.json'), JSON.stringify({ generatedAt: new Date().toISOString(), bundles, routes }, null, 2))
  // The typed client's route list and types (runtime/client/api.ts), from the same definitions.
  if (complete) writeClientApi(root, bundles)
}

/**
 * The source of shared/schema/precompiled.ts with the schemas every start validates compiled
 * to standalone validators (runtime/schema/precompile.ts), bundled like the runtime and imported.
 */
async function precompiledSchemasSource() {
  const result = await build({ ...common, sourcemap: false, entryPoints: [path.join(root, 'runtime/schema/precompile.ts')], outfile: path.join(dist, 'tools/precompile-schemas.mjs') })
  for (const file of result.outputFiles) writeAtomically(file.path, file.contents)
  const bundle = path.join(dist, 'tools/precompile-schemas.mjs')
  const { precompiledModuleSource } = await import(`${pathToFileURL(bundle).href}?v=${sha256(readFileSync(bundle))}`)
  return precompiledModuleSource()
}

/** esbuild plugin: shared/schema/precompiled.ts is `contents` (resolved where the file is). */
const precompiledSchemasPlugin = (contents) => ({
  name: 'precompiled-schemas',
  setup(build) {
    build.onLoad({ filter: /[\\/]shared[\\/]schema[\\/]precompiled\.ts$/ }, (args) => ({ contents, loader: 'js', resolveDir: path.dirname(args.path) }))
  },
})

async function buildRuntime() {
  const entries = RUNTIME_ENTRIES.filter((entry) => !entry.optional || existsSync(path.join(root, entry.source)))
  const schemas = entries.some((entry) => entry.precompiledSchemas) ? await precompiledSchemasSource() : null
  for (const entry of entries) {
    const plugins = entry.precompiledSchemas ? [precompiledSchemasPlugin(schemas)] : []
    const result = await build({ ...common, plugins, entryPoints: [path.join(root, entry.source)], outfile: path.join(dist, entry.out) })
    for (const file of result.outputFiles) writeAtomically(file.path, file.contents)
  }
}

/**
 * TF.js graph models → ONNX into dist/models/ (models/convert). The converter is bundled like
 * the runtime and imported; it skips models whose source and converter hashes are unchanged.
 */
async function convertModelsStep({ root, dist }) {
  const result = await build({ ...common, sourcemap: false, entryPoints: [path.join(root, 'models/convert/build-models.ts')], outfile: path.join(dist, 'tools/convert-models.mjs') })
  for (const file of result.outputFiles) writeAtomically(file.path, file.contents)
  const bundle = path.join(dist, 'tools/convert-models.mjs')
  const { convertModels } = await import(`${pathToFileURL(bundle).href}?v=${sha256(readFileSync(bundle))}`)
  await convertModels({ root, dist })
}

/** Extra build steps of other areas (models, console, documents) register here as data. */
const EXTRA_STEPS = [
  convertModelsStep, // TF.js graph models → ONNX: dist/models/
  buildDocs, // interface documents: dist/staticfile/{httpInterface,mqttInterface}.html, openapi.json
  buildConsole, // the console: dist/console/{index.html,app.js,styles.css}, served at /console/
  buildCli, // integrator CLI: dist/cli/device-cli.mjs (bin device-cli → runtime/device-cli.mjs)
]

async function main() {
  const onlyIndex = process.argv.indexOf('--only')
  const all = listHandlers()
  if (onlyIndex !== -1) {
    const wanted = process.argv[onlyIndex + 1]
    const source = all.find((file) => bundleName(file) === `${wanted}.mjs`)
    if (!source) throw new Error(`--only ${wanted}: no functions/${wanted}.ts`)
    await buildHandlers([source])
    await writeManifest(all.filter((file) => existsSync(path.join(functionsOut, bundleName(file)))), false)
    // The interface documents follow a redeployed handler (its summary or input may have changed).
    await buildDocs({ root, dist })
    return
  }
  await buildHandlers(all)
  await writeManifest(all)
  await buildRuntime()
  for (const step of EXTRA_STEPS) await step({ root, dist })
  const sourcesHash = sha256(all.map((file) => readFileSync(file)).join('\0'))
  writeAtomically(path.join(dist, 'build-info.json'), JSON.stringify({ builtAt: new Date().toISOString(), hash: sourcesHash.slice(0, 16) }, null, 2))
  if (process.argv.includes('--release')) {
    const { archive, upgradePackage } = await buildRelease({ root, dist })
    for (const file of [archive, upgradePackage]) console.log(path.relative(root, file))
  }
}

main().catch((error) => {
  console.error(error.message ?? error)
  process.exit(1)
})
