import { writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { DeviceClient } from '../client/client.ts'
import { detectImage, imageAlgorithms } from '../client/detect.ts'
import { cancelStoredUpload, uploadFile } from '../client/upload.ts'
import { FileResumeStore, defaultStateDir, fileResumeKey, fileSource } from '../client/node.ts'
import { EXIT, UsageError, exitCodeOf } from './exit-codes.ts'
import { describeError, detectionTable, errorText, table } from './output.ts'
import { runFleet } from './fleet/commands.ts'

const USAGE = `device-cli — command-line client of the edge AI device

Usage: device-cli <command> [arguments] [options]

Commands:
  login                         sign in; with --new-password, change the password (needed after the first sign-in)
  algorithms                    list image-analysis algorithms (algorithm/page, algorithmUsage "2")
  capabilities                  show the live upload capabilities
  detect <image> --algorithm <id>
                                create a task, upload the image in resumable chunks, detect, cancel the task
  upload <file>                 upload a file in resumable chunks and print its uploadId (--purpose, default image)
  cancel-upload <file>          cancel the stored upload of a file and delete its resume identity
  status                        device status (QueryDeviceStatus)
  docs                          paths of the packaged interface documents

Fleet commands (several devices on one MQTT broker; docs/deployment.md "Several devices"):
  fleet list                    every device registered on the broker: online/offline, version, HTTP address
  fleet call <path> (--device <id>[,<id>...] | --all) [--body <json>]
                                run a route through the MQTT request transport (spec 5.6) and report per device
  fleet push-upgrade <package> (--device ... | --all)
                                upload a software-upgrade package to each device over HTTP, upgrade, and report
                                the outcome once the device registers again (installed only when its
                                softwareVersion is the package's, spec 4.11)
  fleet push-algorithm <package> (--device ... | --all) [--replace]
                                upload and install an algorithm package on each device

Options:
  --url <url>             device address (env DEVICE_URL, default http://127.0.0.1:8080)
  --account <name>        account (env DEVICE_ACCOUNT, default admin)
  --password <text>       password (env DEVICE_PASSWORD); sent as its MD5 digest
  --new-password <text>   login: change the password to this
  --algorithm <id>        detect: algorithmCode (from \`algorithms\`)
  --task-id <id>          detect: task id (default a new UUID)
  --keep-task             detect: do not cancel the task afterwards
  --chunk-size <bytes>    chunk size (default 8 MB, bounded by the live maxChunkSize)
  --retries <n>           resume attempts after a broken connection (default 3)
  --purpose <purpose>     upload: purpose (default image)
  --picture <file>        detect: write the annotated fullPicture to this file
  --state-dir <dir>       resume identities (env DEVICE_CLI_STATE_DIR, default ~/.device-cli)
  --json                  print JSON instead of a table
  --broker <url>          fleet: broker (env DEVICE_MQTT_URL), mqtt://, mqtts://, ws:// or wss://
  --broker-username <u>   fleet: broker user name (env DEVICE_MQTT_USERNAME)
  --broker-password <p>   fleet: broker password (env DEVICE_MQTT_PASSWORD); never printed
  --broker-ca <file>      fleet: PEM CA bundle of an mqtts/wss broker (env DEVICE_MQTT_CA_FILE)
  --topic-prefix <p>      fleet: the devices' MQTT_TOPIC_PREFIX (env DEVICE_MQTT_TOPIC_PREFIX, default cwai)
  --device <id>[,<id>]    fleet: target devices (their MQTT client ids); repeatable
  --all                   fleet: every registered device (offline ones are reported, not contacted)
  --body <json>           fleet call: the request body (default {})
  --replace               fleet push-algorithm: replace algorithms that exist already
  --timeout <s>           fleet: wait this long for each answer (default 30)
  --restart-timeout <s>   fleet push-upgrade: wait this long for a device to register again (default 300)
  --parallel <n>          fleet: devices handled at once (default 4)
  -h, --help              this text

Exit codes: 0 success · 2 usage error · 3 device error (see messageKey, recommendedAction) · 4 network error · 1 other failure
Fleet commands: 4 when a device (or the broker) could not be reached, else 3 when a device refused or failed.
Resume: an interrupted upload keeps its identity under <state-dir>/uploads/; running the same
command again on the same file continues from the chunk the device asks for (spec 4.12).`

const OPTIONS = {
  url: { type: 'string' },
  account: { type: 'string' },
  password: { type: 'string' },
  'new-password': { type: 'string' },
  algorithm: { type: 'string' },
  'task-id': { type: 'string' },
  'keep-task': { type: 'boolean' },
  'chunk-size': { type: 'string' },
  retries: { type: 'string' },
  purpose: { type: 'string' },
  picture: { type: 'string' },
  'state-dir': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  broker: { type: 'string' },
  'broker-username': { type: 'string' },
  'broker-password': { type: 'string' },
  'broker-ca': { type: 'string' },
  'topic-prefix': { type: 'string' },
  device: { type: 'string', multiple: true },
  all: { type: 'boolean' },
  body: { type: 'string' },
  replace: { type: 'boolean' },
  timeout: { type: 'string' },
  'restart-timeout': { type: 'string' },
  parallel: { type: 'string' },
} as const

type Values = ReturnType<typeof parse>['values']

function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

const positiveInt = (name: string, value: string | undefined, fallback: number | undefined) => {
  if (value === undefined) return fallback
  if (!/^\d+$/.test(value) || (name !== 'retries' && Number(value) < 1)) throw new UsageError(`--${name} must be a ${name === 'retries' ? 'non-negative' : 'positive'} integer, got ${JSON.stringify(value)}`)
  return Number(value)
}

interface Io {
  out: (text: string) => void
  err: (text: string) => void
  env: Record<string, string | undefined>
}

/** The commands as data: arguments they need and what they do. */
interface CommandSpec {
  /** Positional arguments; `file`/`image` are local files read before anything is sent. */
  args: ('file' | 'image')[]
  /** Options the command cannot run without. */
  needs?: (keyof typeof OPTIONS)[]
  run: (c: Context) => Promise<unknown>
}

const COMMANDS: Record<string, CommandSpec> = {
  login: {
    args: [],
    async run({ client, values, session, password, account }) {
      if (values['new-password'] === undefined) return session
      await client.changePassword(password, values['new-password'])
      // spec 5.5: every session was revoked; sign in with the new password.
      const again = await client.login(account, values['new-password'])
      return { ...again, mtk: undefined, passwordChanged: true }
    },
  },
  algorithms: { args: [], run: ({ client }) => imageAlgorithms(client) },
  capabilities: { args: [], run: ({ client }) => client.uploadCapabilities() },
  status: { args: [], run: ({ client }) => client.deviceStatus() },
  docs: {
    args: [],
    async run({ client }) {
      return { http: (await client.interfaceDocUrl(0)).url, mqtt: (await client.interfaceDocUrl(1)).url, openapi: '/staticfile/openapi.json' }
    },
  },
  upload: {
    args: ['file'],
    async run({ client, values, source, store, account, io, chunkSize, retries }) {
      const purpose = values.purpose ?? 'image'
      return uploadFile(client, source!, {
        purpose, resumeKey: fileResumeKey(source!, account, purpose), store, chunkSize, retries,
        onRetry: (attempt, error) => io.err(`connection lost (${error.message}); resuming, attempt ${attempt}`),
      })
    },
  },
  'cancel-upload': {
    args: ['file'],
    async run({ client, values, source, store, account }) {
      const record = await cancelStoredUpload(client, store, fileResumeKey(source!, account, values.purpose ?? 'image'))
      return { cancelled: !!record, uploadId: record?.uploadId ?? null }
    },
  },
  detect: {
    args: ['image'], needs: ['algorithm'],
    async run({ client, values, source, store, account, io, chunkSize, retries }) {
      const outcome = await detectImage(client, source!, {
        algorithmCode: values.algorithm!, taskId: values['task-id'], keepTask: values['keep-task'],
        resumeKey: fileResumeKey(source!, account, 'image'), store, chunkSize, retries,
        onRetry: (attempt, error) => io.err(`connection lost (${error.message}); resuming, attempt ${attempt}`),
      })
      if (values.picture) await writePicture(values.picture, outcome.result.fullPicture)
      return outcome
    },
  },
}

interface Context {
  client: DeviceClient
  values: Values
  /** The local file of a file/image command, read before sign-in. */
  source: Awaited<ReturnType<typeof fileSource>> | null
  session: unknown
  account: string
  password: string
  store: FileResumeStore
  io: Io
  chunkSize: number | undefined
  retries: number | undefined
}

async function readSource(file: string) {
  try {
    return await fileSource(file)
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`)
  }
}

async function writePicture(file: string, fullPicture: string) {
  // spec 2.6: fullPicture is a URL or a data:image/jpeg;base64 value.
  const match = /^data:[^;]+;base64,(.*)$/s.exec(fullPicture)
  if (!match) throw new UsageError(`fullPicture is a URL (${fullPicture}); fetch it from the device`)
  await writeFile(file, Buffer.from(match[1]!, 'base64'))
}

function render(command: string, result: unknown, json: boolean): string {
  if (json) return JSON.stringify(result, null, 2)
  if (command === 'detect') {
    const outcome = result as Awaited<ReturnType<typeof detectImage>>
    const resumed = outcome.upload.resumed ? ` (resumed at chunk ${outcome.upload.resumedFromChunk})` : ''
    return `task ${outcome.taskId} · upload ${outcome.upload.uploadId}, ${outcome.upload.totalChunks} chunk(s)${resumed}\n${detectionTable(outcome.result)}`
  }
  if (command === 'algorithms') {
    const rows = result as Awaited<ReturnType<typeof imageAlgorithms>>
    return table(['algorithmId', 'algorithmName', 'usage', 'runningStatus'], rows.map((r) => [r.algorithmId, r.algorithmName, r.algorithmUsage, r.runningStatus]))
  }
  if (result && typeof result === 'object' && !Array.isArray(result)) {
    return table(['field', 'value'], Object.entries(result).filter(([, v]) => v !== undefined).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)]))
  }
  return JSON.stringify(result, null, 2)
}

/** Runs one command line; resolves with the exit code (never calls process.exit). */
export async function runCli(argv: string[], io: Io): Promise<number> {
  let json = argv.includes('--json')
  try {
    const { values, positionals } = parse(argv)
    json = !!values.json
    if (values.help) {
      io.out(USAGE)
      return EXIT.OK
    }
    const [command, ...rest] = positionals
    if (!command) throw new UsageError('no command given')
    if (command === 'fleet') {
      const stateDir = values['state-dir'] ?? io.env.DEVICE_CLI_STATE_DIR ?? defaultStateDir()
      const { text, code } = await runFleet(rest, values, {
        err: io.err, env: io.env, stateDir,
        chunkSize: positiveInt('chunk-size', values['chunk-size'], undefined), retries: positiveInt('retries', values.retries, 3),
      })
      io.out(text)
      return code
    }
    const spec = COMMANDS[command]
    if (!spec) throw new UsageError(`unknown command ${JSON.stringify(command)}`)
    if (rest.length !== spec.args.length) throw new UsageError(`${command} takes ${spec.args.length ? spec.args.map((a) => `<${a}>`).join(' ') : 'no arguments'}`)
    const missing = (spec.needs ?? []).find((option) => values[option] === undefined)
    if (missing) throw new UsageError(`${command} needs --${missing}${missing === 'algorithm' ? ' <id> (see `device-cli algorithms`)' : ''}`)
    const chunkSize = positiveInt('chunk-size', values['chunk-size'], undefined)
    const retries = positiveInt('retries', values.retries, 3)
    const password = values.password ?? io.env.DEVICE_PASSWORD
    if (password === undefined) throw new UsageError('a password is needed: --password or DEVICE_PASSWORD')
    const account = values.account ?? io.env.DEVICE_ACCOUNT ?? 'admin'
    const url = values.url ?? io.env.DEVICE_URL ?? 'http://127.0.0.1:8080'
    if (!/^https?:\/\/[^/]+/.test(url)) throw new UsageError(`--url must be an http(s) address, got ${JSON.stringify(url)}`)
    const store = new FileResumeStore(values['state-dir'] ?? io.env.DEVICE_CLI_STATE_DIR ?? defaultStateDir())

    const source = spec.args.length ? await readSource(rest[0]!) : null

    const client = new DeviceClient({ baseUrl: url })
    const session = await client.login(account, password)
    const printable = { ...session, mtk: undefined }
    const result = await spec.run({ client, values, source, session: printable, account, password, store, io, chunkSize, retries })
    io.out(render(command, result, json))
    return EXIT.OK
  } catch (error) {
    const code = exitCodeOf(error)
    if (json) io.err(JSON.stringify({ error: describeError(error), exitCode: code }, null, 2))
    else io.err(errorText(error) + (code === EXIT.USAGE ? '\nRun `device-cli --help` for usage.' : ''))
    return code
  }
}
