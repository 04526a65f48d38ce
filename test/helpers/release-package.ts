import { cpSync, existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { create } from 'tar'
import { md5, sha256 } from './tarball.ts'

const root = path.resolve(import.meta.dirname, '../..')
export const PRODUCT = 'EdgeAIDevice'

function listFiles(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name
    return entry.isDirectory() ? listFiles(path.join(dir, entry.name), relative) : [relative]
  })
}

/**
 * A real release package of this build (spec 4.11): dist/, the migrations, the pipeline manifests
 * and a package.json with `version`, a manifest with every checksum, named
 * `<product>-V<version>-<md5>.tar.gz`; without node_modules it runs on the base installation's.
 * `brokenEntry` replaces the entry point with a script that exits at once.
 */
export async function buildRelease(workDir: string, version: string, brokenEntry = false) {
  const pkg = path.join(workDir, `pkg-${version}`)
  cpSync(path.join(root, 'dist'), path.join(pkg, 'dist'), { recursive: true })
  cpSync(path.join(root, 'shared/db/migrations'), path.join(pkg, 'shared/db/migrations'), { recursive: true })
  // The pipeline manifests, when this build ships any (their models come from node_modules).
  const manifests = path.join(root, 'models/manifests')
  if (existsSync(manifests)) cpSync(manifests, path.join(pkg, 'models/manifests'), { recursive: true })
  const packageJson = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
  writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ ...packageJson, version }, null, 2))
  if (brokenEntry) writeFileSync(path.join(pkg, 'dist/runtime/server.mjs'), 'console.error("this release cannot start"); process.exit(3)\n')
  const files = Object.fromEntries(listFiles(pkg).map((file) => [file, sha256(readFileSync(path.join(pkg, file)))]))
  writeFileSync(path.join(pkg, 'manifest.json'), JSON.stringify({ product: PRODUCT, version, entryPoint: 'dist/runtime/server.mjs', files }))
  const temporary = path.join(workDir, `release-${version}.tar.gz`)
  // gzip level 1: the models inside hardly compress, and it takes half the CPU of the default level.
  await create({ gzip: { level: 1 }, file: temporary, cwd: pkg, portable: true }, readdirSync(pkg))
  const name = `${PRODUCT}-V${version}-${md5(readFileSync(temporary))}.tar.gz`
  renameSync(temporary, path.join(workDir, name))
  return { file: path.join(workDir, name), name }
}
