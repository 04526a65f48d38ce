import { execFileSync } from 'node:child_process'
import path from 'node:path'

/** Integration tests run the built device, so every test run starts from a fresh build. */
export default function setup() {
  execFileSync(process.execPath, [path.resolve('build.mjs')], { stdio: 'inherit' })
}
