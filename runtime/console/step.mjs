// Build step (build.mjs EXTRA_STEPS): the console, bundled for browsers with esbuild into
// dist/console/ (app.js, index.html, styles.css). Everything is bundled: no CDN, no other host.
import { build } from 'esbuild'
import { copyFileSync, mkdirSync } from 'node:fs'
import path from 'node:path'

export async function buildConsole({ root, dist }) {
  const source = path.join(root, 'runtime', 'console')
  const out = path.join(dist, 'console')
  mkdirSync(out, { recursive: true })
  await build({
    entryPoints: [path.join(source, 'main.ts')],
    outfile: path.join(out, 'app.js'),
    bundle: true, platform: 'browser', format: 'esm', target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
    minify: true, sourcemap: 'linked', legalComments: 'linked', logLevel: 'warning',
  })
  for (const file of ['index.html', 'styles.css', 'favicon.svg']) copyFileSync(path.join(source, file), path.join(out, file))
}
