// Build step (build.mjs EXTRA_STEPS): the integrator CLI as one ESM bundle, dist/cli/device-cli.mjs.
import { build } from 'esbuild'
import path from 'node:path'

export async function buildCli({ root, dist }) {
  await build({
    entryPoints: [path.join(root, 'runtime/cli/main.ts')],
    outfile: path.join(dist, 'cli', 'device-cli.mjs'),
    bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'warning',
  })
}
