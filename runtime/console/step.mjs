// Build step (build.mjs EXTRA_STEPS): the console, bundled for browsers with esbuild into
// dist/console/ (app.js, index.html, styles.css). Everything is bundled: no CDN, no other host.
// Pages loaded on first use (runtime/console/lazy.ts) are split into dist/console/chunks/, so
// the first load carries only what every page needs.
import { build } from 'esbuild'
import { copyFileSync, mkdirSync, rmSync } from 'node:fs'
import path from 'node:path'

export async function buildConsole({ root, dist }) {
  const source = path.join(root, 'runtime', 'console')
  const out = path.join(dist, 'console')
  mkdirSync(out, { recursive: true })
  // Chunk names carry their content hash: the previous build's are removed, not left to pile up.
  rmSync(path.join(out, 'chunks'), { recursive: true, force: true })
  await build({
    entryPoints: { app: path.join(source, 'main.ts') },
    outdir: out, splitting: true, chunkNames: 'chunks/[name]-[hash]',
    bundle: true, platform: 'browser', format: 'esm', target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
    minify: true, sourcemap: 'linked', legalComments: 'linked', logLevel: 'warning',
  })
  for (const file of ['index.html', 'styles.css', 'favicon.svg']) copyFileSync(path.join(source, file), path.join(out, file))
}
