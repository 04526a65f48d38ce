import { execFileSync } from 'node:child_process'
import path from 'node:path'

/**
 * The projects that run the built device (integration, browser, e2e) start from a fresh build:
 * one build per run, whichever of them sets up first (each project runs its global setup in the
 * same vitest process).
 */
export default function setup() {
  if (process.env.DEVICE_TEST_BUILD === 'done') return
  execFileSync(process.execPath, [path.resolve('build.mjs')], { stdio: 'inherit' })
  process.env.DEVICE_TEST_BUILD = 'done'
}
