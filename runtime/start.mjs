// `npm start`: builds when dist/ is missing or older than any source, then starts the supervisor.
import { existsSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { spawnSync } from 'node:child_process'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const stamp = path.join(root, 'dist', 'build-info.json')
const SOURCES = ['functions', 'shared', 'runtime', 'models', 'build.mjs', 'package.json']

function newestMtime(entry) {
  const full = path.join(root, entry)
  if (!existsSync(full)) return 0
  const stat = statSync(full)
  if (!stat.isDirectory()) return stat.mtimeMs
  let newest = stat.mtimeMs
  for (const child of readdirSync(full)) newest = Math.max(newest, newestMtime(path.join(entry, child)))
  return newest
}

const stale = !existsSync(stamp) || SOURCES.some((entry) => newestMtime(entry) > statSync(stamp).mtimeMs)
if (stale) {
  const build = spawnSync(process.execPath, [path.join(root, 'build.mjs')], { stdio: 'inherit', cwd: root })
  if (build.status !== 0) process.exit(build.status ?? 1)
}

// The supervisor runs the device as a child process, installs staged upgrades at start-up
// and restarts the device when it exits with code 75 (runtime/supervisor/main.ts).
await import(pathToFileURL(path.join(root, 'dist', 'runtime', 'supervisor.mjs')).href)
