#!/usr/bin/env node
// Writes test/durations.json, the per-file durations the sequencer orders files by
// (test/helpers/sequencer.ts), from vitest's results cache of the last full run in this checkout
// (node_modules/.vite/vitest/*/results.json). A fresh clone (CI) has no cache: the committed
// table is what puts the longest files first there. Run after a full `npm test`:
// `npm run test:durations`.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'

const root = path.resolve(import.meta.dirname, '..')
const cacheRoot = path.join(root, 'node_modules/.vite/vitest')
const caches = readdirSync(cacheRoot, { withFileTypes: true }).filter((entry) => entry.isDirectory())
  .map((entry) => path.join(cacheRoot, entry.name, 'results.json'))
  .filter((file) => { try { return statSync(file).isFile() } catch { return false } })
  .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)
if (caches.length === 0) {
  console.error(`no vitest results cache under ${cacheRoot}: run the whole suite first (npm test)`)
  process.exit(1)
}
const { results } = JSON.parse(readFileSync(caches[0], 'utf8'))
const seconds = Object.fromEntries(results
  .filter(([, result]) => result.duration > 0)
  .map(([key, result]) => [key, Math.round(result.duration / 100) / 10])
  .sort(([a], [b]) => a.localeCompare(b)))
writeFileSync(path.join(root, 'test/durations.json'), `${JSON.stringify(seconds, null, 2)}\n`)
console.log(`test/durations.json: ${Object.keys(seconds).length} files from ${path.relative(root, caches[0])}`)
