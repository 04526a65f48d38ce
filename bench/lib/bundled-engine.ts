import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { build } from 'esbuild'
import { BENCH_DIR } from './report.ts'

type EngineModule = typeof import('../../runtime/sidecar/engine.ts')

const ROOT = path.dirname(BENCH_DIR)

/**
 * `InferenceEngine` compiled the way `build.mjs` compiles the sidecar (one esbuild bundle,
 * npm packages external), for an in-process baseline that runs the same code as the device.
 * Imported through tsx instead, the baseline would be slower than the device for no reason
 * of the device's: tsx transpiles with esbuild's `keepNames`, which wraps every function
 * created at run time in a `__name()` call — e.g. the per-pixel sampler closure of
 * `cropQuad` (text-ocr), ~16× slower under tsx than bundled on this machine.
 */
export async function loadBundledEngine(): Promise<EngineModule> {
  const outfile = path.join(ROOT, 'dist', 'bench', 'engine.mjs')
  await build({
    entryPoints: [path.join(ROOT, 'runtime/sidecar/engine.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  })
  return import(pathToFileURL(outfile).href) as Promise<EngineModule>
}
