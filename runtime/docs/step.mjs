// Build step (registered in build.mjs EXTRA_STEPS): generates the packaged interface documents
// (spec 4.11, 9) from the routes manifest, the handlers' input schemas and the event/topic
// definitions. Bundles a small generator entry with esbuild, then runs it.
import { build } from 'esbuild'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

/**
 * The MQTT side comes from the events area: `shared/events/kinds.ts` (EVENT_KINDS) and
 * `runtime/events/mqtt-topics.ts` (mqttTopics). While a build lacks them the MQTT document says so.
 */
function mqttSource(root) {
  const has = (file) => existsSync(path.join(root, file))
  if (!has('shared/events/kinds.ts')) return 'const mqtt = null'
  const topics = has('runtime/events/mqtt-topics.ts')
    ? `import { mqttTopics, REGISTRATION_FIELDS as registration } from './runtime/events/mqtt-topics.ts'
       const described = mqttTopics('<topicPrefix>', '<clientId>')
       const topics = Object.fromEntries(Object.entries(described).map(([name, t]) => [name, typeof t === 'function' ? t('<kind>') : t]))`
    : 'const topics = {}, registration = {}'
  return `import { EVENT_KINDS } from './shared/events/kinds.ts'
    ${topics}
    const mqtt = { topics, registration, eventKinds: Object.entries(EVENT_KINDS).map(([kind, info]) => ({ kind, ...info })) }`
}

export async function buildDocs({ root, dist }) {
  const entry = `${mqttSource(root)}
    import { generateDocs } from './runtime/docs/generate.ts'
    export const run = (options) => generateDocs({ ...options, mqtt })`
  const outfile = path.join(dist, 'tools', 'docs.mjs')
  await build({
    stdin: { contents: entry, resolveDir: root, sourcefile: 'docs-entry.ts', loader: 'ts' },
    bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external',
    outfile, logLevel: 'warning',
  })
  const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
  const { run } = await import(`${pathToFileURL(outfile).href}?t=${Date.now()}`)
  await run({ dist, softwareVersion: version })
}
