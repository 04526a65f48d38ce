import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The project folder: the nearest ancestor with a package.json (works from source and from dist/). */
function findRoot(start: string): string {
  let dir = start
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error(`no package.json above ${start}`)
    dir = parent
  }
  return dir
}

export const projectRoot = findRoot(path.dirname(fileURLToPath(import.meta.url)))
export const distDir = path.join(projectRoot, 'dist')
export const functionsDistDir = path.join(distDir, 'functions')
export const migrationsDir = path.join(projectRoot, 'shared', 'db', 'migrations')
