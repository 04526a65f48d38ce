// Release build (`node build.mjs --release`, `npm run release`), from an existing dist/:
//   dist/release/<product>-V<x.y.z>-linux-x64.tar.gz  one folder: the executable + the application tree;
//   dist/release/<product>-V<x.y.z>-<md5>.tar.gz      the same application tree as a software-upgrade
//                                                     package (spec 4.11: manifest.json + SHA-256 of each file).
// Run alone: `node infra/release/build.mjs [--version X.Y.Z] [--outdir DIR] [--upgrade-only] [--gzip-level N]`
// (a bumped version for upgrade tests; --upgrade-only skips the executable; --gzip-level 1–9,
// default zlib's 6: the tests' throw-away builds take 1, docs/deployment.md).
//
// The executable is Node with infra/release/launcher.ts injected (single-executable
// application). The bundles, console, documents, migrations and manifests are laid beside it,
// not embedded as SEA assets: a SEA asset is bytes (`sea.getAsset`), and the server imports its
// handler bundles by path (hot redeploy, `build.mjs --only`), resolves their npm imports from
// node_modules and forks the sidecar from a script file; the upgrade package carries the same
// tree, checksummed file by file.
import { build } from 'esbuild'
import { createHash } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire, isBuiltin } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { create } from 'tar'

/** Name of the executable, in the release folder and in the service unit / Dockerfile. */
export const EXECUTABLE = 'edge-device'
const PLATFORM = 'linux-x64'
/** What the device needs from dist/ (not the converter or intermediate files), and device-cli (`edge-device cli`). */
const DIST_PARTS = ['runtime', 'functions', 'console', 'staticfile', 'models', 'cli', 'build-info.json']
/** Folders of dist/ whose bundles import npm packages. */
const BUNDLE_PARTS = ['runtime', 'functions', 'cli']
/** Native add-ons ship only their linux-x64 binaries. */
const FOREIGN_BINARIES = /(^|\/)(darwin|win32|linux\/(arm64|arm|ia32|ppc64|s390x))(\/|$)|-(darwin|win32|musl|arm64|arm|ia32)(-|$)/
/** Packages shipped though no bundle imports them by name: the ffmpeg binary the cameras decode with. */
const EXTRA_PACKAGES = ['@ffmpeg-installer/linux-x64']

const sha = (algorithm, bytes) => createHash(algorithm).update(bytes).digest('hex')
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'))

function listFiles(dir, prefix = '') {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name
    return entry.isDirectory() ? listFiles(path.join(dir, entry.name), relative) : [relative]
  })
}

/** `settings` of shared/config.ts: the product prefix of upgrade packages is fixed there (UPGRADE_PRODUCT). */
async function loadSettings(root) {
  const result = await build({ entryPoints: [path.join(root, 'shared/config.ts')], bundle: true, platform: 'node', format: 'esm', write: false, logLevel: 'warning' })
  const { settings } = await import(`data:text/javascript;base64,${Buffer.from(result.outputFiles[0].contents).toString('base64')}`)
  return settings
}

/** npm packages the built bundles import (bare specifiers; the inline source maps are left out). */
function importedPackages(dist) {
  const names = new Set()
  const bundles = BUNDLE_PARTS.flatMap((part) => listFiles(path.join(dist, part)).map((f) => path.join(dist, part, f)))
  for (const file of bundles.filter((f) => f.endsWith('.mjs'))) {
    const code = readFileSync(file, 'utf8').replace(/\/\/# sourceMappingURL=.*$/gm, '')
    for (const [, specifier] of code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\(\s*)["']((?:@[\w.-]+\/)?\w[\w.-]*(?:\/[\w./-]+)?)["']/g)) {
      if (isBuiltin(specifier)) continue
      const parts = specifier.split('/')
      names.add(specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0])
    }
  }
  return [...names].sort()
}

/** Folder of `name` as node resolves it from `fromDir` (node_modules folders upwards). */
function packageFolder(fromDir, name) {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name)
    if (existsSync(path.join(candidate, 'package.json'))) return candidate
    if (path.dirname(dir) === dir) return null
  }
}

/** The packages and everything they depend on (optional dependencies when installed), as folders. */
function dependencyClosure(root, names) {
  const folders = new Set()
  const visit = (fromDir, name, optional) => {
    const folder = packageFolder(fromDir, name)
    if (!folder) {
      if (optional) return
      throw new Error(`${name} is not installed (needed from ${fromDir})`)
    }
    if (folders.has(folder) || FOREIGN_BINARIES.test(name)) return
    folders.add(folder)
    const pkg = readJson(path.join(folder, 'package.json'))
    for (const dep of Object.keys(pkg.dependencies ?? {})) visit(folder, dep, false)
    for (const dep of Object.keys(pkg.optionalDependencies ?? {})) visit(folder, dep, true)
  }
  for (const name of names) visit(root, name, false)
  return [...folders]
}

/** Package files the pipeline manifests read (`{ package, file }` anywhere in a manifest). */
function manifestPackageFiles(root) {
  const dir = path.join(root, 'models', 'manifests')
  const refs = []
  const walk = (value) => {
    if (Array.isArray(value)) value.forEach(walk)
    else if (value && typeof value === 'object') {
      if (typeof value.package === 'string' && typeof value.file === 'string') refs.push(value)
      else Object.values(value).forEach(walk)
    }
  }
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) walk(readJson(path.join(dir, file)))
  return refs
}

/** The application tree (everything but the executable) in `app`. */
function layApplication({ root, dist, app, version }) {
  const rootPackage = readJson(path.join(root, 'package.json'))
  // projectRoot of the runtime (runtime/paths.ts) and the version QueryDeviceStatus reports.
  writeFileSync(path.join(app, 'package.json'), `${JSON.stringify({ name: rootPackage.name, version, private: true, type: 'module' }, null, 2)}\n`)
  for (const part of DIST_PARTS) cpSync(path.join(dist, part), path.join(app, 'dist', part), { recursive: true })
  cpSync(path.join(root, 'shared/db/migrations'), path.join(app, 'shared/db/migrations'), { recursive: true })
  cpSync(path.join(root, 'models/manifests'), path.join(app, 'models/manifests'), { recursive: true })

  const modules = realpathSync(path.join(root, 'node_modules'))
  const copyModule = (from, to) => cpSync(from, to, {
    recursive: true, dereference: true,
    filter: (source) => {
      const relative = path.relative(modules, source).split(path.sep).join('/')
      return !FOREIGN_BINARIES.test(relative) && !/(^|\/)node_modules\/\.bin(\/|$)/.test(relative)
    },
  })
  const packages = [...importedPackages(dist), ...EXTRA_PACKAGES]
  for (const folder of dependencyClosure(root, packages)) {
    copyModule(folder, path.join(app, 'node_modules', path.relative(modules, realpathSync(folder))))
  }
  for (const ref of manifestPackageFiles(root)) {
    const folder = packageFolder(root, ref.package)
    const target = path.join(app, 'node_modules', ref.package)
    mkdirSync(path.dirname(path.join(target, ref.file)), { recursive: true })
    copyFileSync(path.join(folder, 'package.json'), path.join(target, 'package.json'))
    copyFileSync(path.join(folder, ref.file), path.join(target, ref.file))
  }
}

/** Node with the launcher injected (https://nodejs.org/api/single-executable-applications.html). */
async function buildExecutable({ root, work, file, version, product }) {
  const main = path.join(work, 'launcher.cjs')
  await build({
    entryPoints: [path.join(root, 'infra/release/launcher.ts')], outfile: main, bundle: true, platform: 'node', format: 'cjs', target: 'node20',
    define: { RELEASE_VERSION: JSON.stringify(version), RELEASE_PRODUCT: JSON.stringify(product) }, logLevel: 'warning',
  })
  const blob = path.join(work, 'sea.blob')
  const seaConfig = path.join(work, 'sea-config.json')
  writeFileSync(seaConfig, JSON.stringify({ main, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true }))
  execFileSync(process.execPath, ['--experimental-sea-config', seaConfig], { stdio: 'ignore' })
  copyFileSync(process.execPath, file)
  chmodSync(file, 0o755)
  // postject (Node's injector) is a devDependency; the build machine needs it, the device does not.
  const { inject } = createRequire(path.join(root, 'package.json'))('postject')
  await inject(file, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2' })
}

async function tarGz(file, cwd, entries, gzipLevel) {
  await create({ gzip: gzipLevel === undefined ? true : { level: gzipLevel }, file, cwd, portable: true }, entries)
}

export async function buildRelease({ root, dist, outdir = path.join(dist, 'release'), version, upgradeOnly = false, gzipLevel }) {
  if (gzipLevel !== undefined && !(Number.isInteger(gzipLevel) && gzipLevel >= 1 && gzipLevel <= 9)) throw new Error(`--gzip-level must be 1–9, not ${gzipLevel}`)
  if (process.platform !== 'linux' || process.arch !== 'x64') throw new Error(`the release is built for ${PLATFORM} on ${PLATFORM} (this is ${process.platform}-${process.arch})`)
  version ??= readJson(path.join(root, 'package.json')).version
  const product = (await loadSettings(root)).upgradeProduct.default
  const folderName = `${product}-V${version}-${PLATFORM}`
  const work = path.join(outdir, `.work-${version}`)
  rmSync(work, { recursive: true, force: true })
  const app = path.join(work, folderName)
  mkdirSync(app, { recursive: true })
  layApplication({ root, dist, app, version })

  // Upgrade package (spec 4.11): the tree with manifest.json at its root, named with its MD5.
  const files = Object.fromEntries(listFiles(app).map((file) => [file, sha('sha256', readFileSync(path.join(app, file)))]))
  writeFileSync(path.join(app, 'manifest.json'), JSON.stringify({ product, version, entryPoint: 'dist/runtime/server.mjs', files }))
  const packed = path.join(work, 'upgrade.tar.gz')
  await tarGz(packed, app, readdirSync(app), gzipLevel)
  const upgradePackage = path.join(outdir, `${product}-V${version}-${sha('md5', readFileSync(packed))}.tar.gz`)
  renameSync(packed, upgradePackage)
  if (upgradeOnly) {
    rmSync(work, { recursive: true, force: true })
    return { upgradePackage }
  }

  await buildExecutable({ root, work, file: path.join(app, EXECUTABLE), version, product })
  const archive = path.join(outdir, `${folderName}.tar.gz`)
  await tarGz(archive, work, [folderName], gzipLevel)
  rmSync(work, { recursive: true, force: true })
  return { archive, upgradePackage }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const option = (name) => { const i = process.argv.indexOf(name); return i === -1 ? undefined : process.argv[i + 1] }
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
  const dist = path.join(root, 'dist')
  const outdir = option('--outdir') ? path.resolve(option('--outdir')) : undefined
  const gzipLevel = option('--gzip-level') === undefined ? undefined : Number(option('--gzip-level'))
  buildRelease({ root, dist, outdir, version: option('--version'), upgradeOnly: process.argv.includes('--upgrade-only'), gzipLevel })
    .then((out) => { for (const file of Object.values(out)) console.log(`${path.relative(process.cwd(), file)}  ${(statSync(file).size / 1e6).toFixed(1)} MB`) })
    .catch((error) => { console.error(error.stack ?? error); process.exit(1) })
}
