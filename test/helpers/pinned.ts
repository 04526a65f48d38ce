import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'))

/**
 * Code that mirrors or subclasses a library's internals is written against one version of it:
 * package.json must pin that exact version (no range), and it must be the one installed.
 */
export function expectPinned(name: string, version: string): void {
  const { dependencies } = readJson(path.join(root, 'package.json'))
  expect(dependencies[name], `${name} in package.json`).toBe(version)
  expect(readJson(path.join(root, 'node_modules', name, 'package.json')).version, `${name} installed`).toBe(version)
}
