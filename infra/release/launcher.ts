import path from 'node:path'
import { pathToFileURL } from 'node:url'
import v8 from 'node:v8'
import vm from 'node:vm'
import { loadConfig, settings } from '../../shared/config.ts'

/**
 * Main script of the release executable (a Node single-executable application, built by
 * infra/release/build.mjs). The executable is Node itself, so it plays every process of the
 * device:
 * - no argument: the supervisor (`npm start`), `<install dir>/dist/runtime/supervisor.mjs`;
 * - a script path: runs that script like `node <script> ...`. The supervisor starts the
 *   server and the server forks the sidecar with `process.execPath` + a script path, which in
 *   a single-executable application is this executable;
 * - `--version`, `--help`;
 * - `--probe`: exit 0 when the device on PORT answers Probe (container HEALTHCHECK; the image has no curl);
 * - `cli <command> ...`: device-cli (runtime/cli/main.ts), so a box without Node manages itself and its siblings.
 */
declare const RELEASE_VERSION: string
declare const RELEASE_PRODUCT: string

const home = path.dirname(process.execPath)
/**
 * Node options the device starts its own processes with (the sidecar is forked with
 * `--expose-gc --initial-old-space-size=64`). A single-executable application does not parse
 * Node's options, so the launcher applies them itself before the script (by name; a value
 * follows `=`).
 */
const NODE_OPTIONS: Record<string, (value: string | undefined) => void> = {
  '--expose-gc': () => {
    v8.setFlagsFromString('--expose-gc')
    // The function lives in a context made after the flag; making one costs the sidecar's
    // start-up several ms, so it is made on the first call (the sidecar collects only later).
    let exposed: typeof globalThis.gc | undefined
    globalThis.gc = ((options?: never) => (exposed ??= vm.runInNewContext('gc') as typeof globalThis.gc)!(options)) as typeof globalThis.gc
  },
  // Heap sizes are fixed when V8 starts, before any script: the released sidecar keeps V8's
  // own first old-space limit (it collects more often; docs/detection.md "Less work per detection").
  '--initial-old-space-size': () => {},
}
const optionName = (arg: string | undefined) => arg?.split('=', 1)[0]
const argv = process.argv.slice(2)
while (argv[0] !== undefined && Object.hasOwn(NODE_OPTIONS, optionName(argv[0])!)) {
  const [name, value] = argv.shift()!.split(/=(.*)/s)
  NODE_OPTIONS[name!]!(value)
}
const [first, ...rest] = argv

function help(): string {
  const rows = Object.values(settings).map((s) => `  ${s.env.padEnd(34)} ${s.kind.padEnd(8)} default ${JSON.stringify(s.default)}\n      ${s.doc}`)
  return [
    `${RELEASE_PRODUCT} ${RELEASE_VERSION}`,
    `Usage: ${path.basename(process.execPath)} [--version | --help | --probe | cli <command> ...]`,
    '`cli --help` lists the commands of device-cli (one device over HTTP, several on one MQTT broker).',
    'Starts the device (supervisor, server and inference sidecar). Settings come from the',
    'environment (or the JSON file named by CONFIG_FILE):',
    ...rows,
  ].join('\n')
}

/**
 * A SEA main script's own `import()` and `require` reach only built-in modules; a function
 * compiled with the main context's default loader imports the bundles on disk like node does.
 */
const importer = new vm.Script('(specifier) => import(specifier)', { importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER })
  .runInThisContext() as (specifier: string) => Promise<unknown>

// That loader constant is flagged experimental; its warning would be the one non-JSON line of the device's output.
const emitWarning = process.emitWarning
process.emitWarning = ((warning: string | Error, ...args: never[]) => {
  if (!String(warning).includes('USE_MAIN_CONTEXT_DEFAULT_LOADER')) emitWarning.call(process, warning, ...args)
}) as typeof process.emitWarning

function run(script: string, args: string[]) {
  const file = path.resolve(script)
  // What node would give the script: argv[1] is the script (server.ts compares it to import.meta.url).
  process.argv = [process.execPath, file, ...args]
  importer(pathToFileURL(file).href).catch((error) => {
    console.error(error)
    process.exit(1)
  })
}

type RunCli = (argv: string[], io: { out: (text: string) => void; err: (text: string) => void; env: NodeJS.ProcessEnv }) => Promise<number>

async function cli(args: string[]) {
  const { runCli } = await importer(pathToFileURL(path.join(home, 'dist', 'cli', 'device-cli.mjs')).href) as { runCli: RunCli }
  process.exitCode = await runCli(args, { out: (text) => console.log(text), err: (text) => console.error(text), env: process.env })
}

async function probe(): Promise<boolean> {
  const { port, host } = loadConfig()
  const target = ['0.0.0.0', '::', ''].includes(host) ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host
  const response = await fetch(`http://${target}:${port}/v1/cwai/aihost/Probe`, { method: 'POST', signal: AbortSignal.timeout(5000) }).catch(() => null)
  return response?.ok === true && ((await response.json().catch(() => null)) as { resCode?: number } | null)?.resCode === 1
}

if (first === '--version' || first === '-v') console.log(RELEASE_VERSION)
else if (first === '--help' || first === '-h') console.log(help())
else if (first === '--probe') void probe().then((ok) => process.exit(ok ? 0 : 1))
else if (first === 'cli') cli(rest).catch((error) => {
  console.error(error)
  process.exit(1)
})
else if (first === undefined) run(path.join(home, 'dist', 'runtime', 'supervisor.mjs'), [])
else if (/\.(mjs|cjs|js)$/.test(first)) run(first, rest)
else {
  console.error(`unknown argument ${first}\n\n${help()}`)
  process.exit(2)
}
