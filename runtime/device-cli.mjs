#!/usr/bin/env node
// `device-cli` (package.json bin): builds when the CLI bundle is missing or older than its
// sources (runtime/client/, runtime/cli/), then runs it. Source: runtime/cli/main.ts.
import { existsSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { spawnSync } from 'node:child_process'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const bundle = path.join(root, 'dist', 'cli', 'device-cli.mjs')

const newest = (dir) => readdirSync(dir, { withFileTypes: true }).reduce((max, entry) => {
  const full = path.join(dir, entry.name)
  return Math.max(max, entry.isDirectory() ? newest(full) : statSync(full).mtimeMs)
}, 0)

const sources = ['client', 'cli'].map((dir) => newest(path.join(root, 'runtime', dir)))
if (!existsSync(bundle) || Math.max(...sources) > statSync(bundle).mtimeMs) {
  const build = spawnSync(process.execPath, [path.join(root, 'build.mjs')], { stdio: ['ignore', 'ignore', 'inherit'], cwd: root })
  if (build.status !== 0) process.exit(1)
}

const { runCli } = await import(pathToFileURL(bundle).href)
process.exitCode = await runCli(process.argv.slice(2), { out: (text) => console.log(text), err: (text) => console.error(text), env: process.env })
