import { readFile } from 'node:fs/promises'
import { FileResumeStore, fileResumeKey, fileSource } from '../../client/node.ts'
import { md5Hex } from '../../client/md5.ts'
import { pushAlgorithm, pushUpgrade, type HttpAccess } from '../../client/fleet-push.ts'
import { EXIT, UsageError, exitCodeOf } from '../exit-codes.ts'
import { describeError, table } from '../output.ts'
import { FleetBroker, type BrokerOptions, type FleetDevice } from './broker.ts'

/** The options of the fleet commands (parsed by main.ts with the others). */
export interface FleetValues {
  broker?: string
  'broker-username'?: string
  'broker-password'?: string
  'broker-ca'?: string
  'topic-prefix'?: string
  device?: string[]
  all?: boolean
  body?: string
  replace?: boolean
  timeout?: string
  'restart-timeout'?: string
  parallel?: string
  account?: string
  password?: string
  json?: boolean
}

export interface FleetIo {
  err: (text: string) => void
  env: Record<string, string | undefined>
  stateDir: string
  chunkSize: number | undefined
  retries: number | undefined
}

/** One device's line of a fleet command's report. */
interface DeviceReport {
  deviceId: string
  /** What happened: `ok`/`installed`, a messageKey, `offline`, `unknown-device`, `timeout`, `unreachable`, ... */
  outcome: string
  /** The device did what was asked. */
  ok: boolean
  /** The device could be reached (false: exit code 4). */
  reached: boolean
  /** One line for the table. */
  summary: string
  [field: string]: unknown
}

interface Run {
  broker: FleetBroker
  args: string[]
  values: FleetValues
  io: FleetIo
  timeoutMs: number
}

interface FleetCommand {
  /** Positional arguments after the sub-command. */
  args: string[]
  /** Runs on each target device (`--device`/`--all`); without it the command reads the broker only. */
  perDevice?: (run: Run & { prepared: unknown }) => (device: FleetDevice) => Promise<DeviceReport>
  /** Checks the arguments and reads local files before the broker is contacted. */
  prepare?: (run: Omit<Run, 'broker'>) => Promise<unknown>
}

const positive = (name: string, value: string | undefined, fallback: number) => {
  if (value === undefined) return fallback
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`--${name} must be a positive integer, got ${JSON.stringify(value)}`)
  return Number(value)
}

/** A device error or a lost connection as a report line (spec 7: messageKey and recommendedAction first). */
function failed(deviceId: string, error: unknown): DeviceReport {
  const d = describeError(error)
  const reached = exitCodeOf(error) !== EXIT.NETWORK
  const outcome = String(d.messageKey ?? (reached ? 'failed' : 'unreachable'))
  const summary = [d.msgText ?? d.message ?? (d.httpStatus ? `HTTP ${d.httpStatus}` : null), d.recommendedAction].filter(Boolean).join(' · ')
  return { deviceId, outcome, ok: false, reached, summary, error: d }
}

async function withHttp(values: FleetValues, io: FleetIo, timeoutMs: number, file: string) {
  const password = values.password ?? io.env.DEVICE_PASSWORD
  if (password === undefined) throw new UsageError('a password is needed to sign in on each device: --password or DEVICE_PASSWORD')
  let source
  try {
    source = await fileSource(file)
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`)
  }
  const access: HttpAccess = {
    account: values.account ?? io.env.DEVICE_ACCOUNT ?? 'admin', pwdMd5: md5Hex(password), store: new FileResumeStore(io.stateDir), fileKey: fileResumeKey(source, 'fleet'),
    chunkSize: io.chunkSize, retries: io.retries, timeoutMs,
    onRetry: (deviceId, attempt, error) => io.err(`${deviceId}: connection lost (${error.message}); resuming, attempt ${attempt}`),
  }
  return { source, access }
}

type Prepared<T extends (...args: never[]) => unknown> = Awaited<ReturnType<T>>
const prepareUpgrade = async ({ args, values, io, timeoutMs }: Omit<Run, 'broker'>) =>
  ({ ...(await withHttp(values, io, timeoutMs, args[0]!)), restartTimeoutMs: positive('restart-timeout', values['restart-timeout'], 300) * 1000 })

const COMMANDS: Record<string, FleetCommand> = {
  list: { args: [] },
  call: {
    args: ['path'],
    async prepare({ args, values }) {
      if (!args[0]!.startsWith('/')) throw new UsageError(`the route path must start with /, got ${JSON.stringify(args[0])}`)
      try {
        return values.body === undefined ? {} : JSON.parse(values.body)
      } catch (error) {
        throw new UsageError(`--body is not JSON: ${(error as Error).message}`)
      }
    },
    perDevice: ({ broker, args, prepared: body, timeoutMs }) => async (device) => {
      const answer = await broker.request(device.deviceId, args[0]!, body, timeoutMs)
      if (!answer) return { deviceId: device.deviceId, outcome: 'timeout', ok: false, reached: false, summary: `no answer within ${timeoutMs / 1000} s` }
      const { envelope, status } = answer
      const item = envelope.resMsg?.[0]
      if (envelope.resCode === 1) return { deviceId: device.deviceId, outcome: 'ok', ok: true, reached: true, summary: JSON.stringify(envelope.resData ?? null).slice(0, 120), status, envelope }
      return { deviceId: device.deviceId, outcome: item?.messageKey ?? `HTTP ${status}`, ok: false, reached: true, summary: [item?.msgText, item?.recommendedAction].filter(Boolean).join(' · '), status, envelope }
    },
  },
  'push-upgrade': {
    args: ['package'],
    prepare: prepareUpgrade,
    perDevice: ({ broker, prepared }) => async (device) => {
      const { source, access, restartTimeoutMs } = prepared as Prepared<typeof prepareUpgrade>
      const pushed = await pushUpgrade(device, source, broker, { ...access, restartTimeoutMs })
      // spec 4.11: installed only when the running version is the package's.
      const ok = pushed.outcome === 'installed' && pushed.softwareVersion === pushed.version
      const summary = `${pushed.fromVersion} → ${pushed.softwareVersion ?? '?'}${pushed.reason ? ` (${pushed.reason})` : ''}`
      return { deviceId: device.deviceId, ok, reached: pushed.outcome !== 'timeout', summary, ...pushed }
    },
  },
  'push-algorithm': {
    args: ['package'],
    prepare: ({ args, values, io, timeoutMs }) => withHttp(values, io, timeoutMs, args[0]!),
    perDevice: ({ values, prepared }) => async (device) => {
      const { source, access } = prepared as Prepared<typeof withHttp>
      const pushed = await pushAlgorithm(device, source, !!values.replace, access)
      return { deviceId: device.deviceId, ok: true, reached: true, summary: pushed.algorithms.map((a) => `${a.algorithmId} ${a.version}`).join(', '), ...pushed }
    },
  },
}

export const FLEET_COMMANDS = Object.keys(COMMANDS)

function brokerOptions(values: FleetValues, env: FleetIo['env']): Omit<BrokerOptions, 'ca'> & { caFile?: string } {
  const url = values.broker ?? env.DEVICE_MQTT_URL
  if (!url) throw new UsageError('a broker is needed: --broker or DEVICE_MQTT_URL')
  if (!/^(mqtts?|wss?):\/\/[^/]+/.test(url)) throw new UsageError('--broker must be an mqtt://, mqtts://, ws:// or wss:// address')
  return {
    url,
    username: values['broker-username'] ?? env.DEVICE_MQTT_USERNAME,
    password: values['broker-password'] ?? env.DEVICE_MQTT_PASSWORD,
    topicPrefix: values['topic-prefix'] ?? env.DEVICE_MQTT_TOPIC_PREFIX ?? 'cwai',
    caFile: values['broker-ca'] ?? env.DEVICE_MQTT_CA_FILE,
  }
}

/** The devices a command runs on: the named ones (`--device a,b`) or every registered one (`--all`). */
function targets(broker: FleetBroker, values: FleetValues): (FleetDevice | string)[] {
  if (values.all) return broker.list()
  return [...new Set(values.device!.flatMap((d) => d.split(',')).map((d) => d.trim()).filter(Boolean))].map((id) => broker.device(id) ?? id)
}

/** Runs `run` on each item with at most `limit` at once, keeping the order of the items. */
async function eachLimited<T, R>(items: T[], limit: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length)
  let next = 0
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await run(items[index]!)
    }
  }))
  return results
}

/** `device-cli fleet <command> ...`: resolves with what to print and the exit code. */
export async function runFleet(positionals: string[], values: FleetValues, io: FleetIo): Promise<{ text: string; code: number }> {
  const [name, ...args] = positionals
  const command = name === undefined ? undefined : COMMANDS[name]
  if (!command) throw new UsageError(name === undefined ? `fleet needs a command: ${FLEET_COMMANDS.join(', ')}` : `unknown fleet command ${JSON.stringify(name)}`)
  if (args.length !== command.args.length) throw new UsageError(`fleet ${name} takes ${command.args.length ? command.args.map((a) => `<${a}>`).join(' ') : 'no arguments'}`)
  if (command.perDevice && !values.all === !values.device?.length) throw new UsageError(`fleet ${name} needs either --device <id>[,<id>...] or --all`)
  const timeoutMs = positive('timeout', values.timeout, 30) * 1000
  const parallel = positive('parallel', values.parallel, 4)
  const { caFile, ...options } = brokerOptions(values, io.env)
  const ca = caFile ? await readFile(caFile).catch((error: Error) => { throw new UsageError(`cannot read ${caFile}: ${error.message}`) }) : undefined
  const prepared = await command.prepare?.({ args, values, io, timeoutMs })

  const broker = await FleetBroker.connect({ ...options, ...(ca ? { ca } : {}) })
  try {
    if (!command.perDevice) {
      const devices = broker.list().map(({ deviceId, state, registration: r }) => ({
        deviceId, state, softwareVersion: r?.softwareVersion ?? null, startedAt: r?.startedAt ?? null, registeredAt: r?.registeredAt ?? null, http: r?.http?.urls ?? [],
      }))
      const text = values.json ? JSON.stringify(devices, null, 2)
        : table(['device', 'state', 'softwareVersion', 'startedAt', 'http'], devices.map((d) => [d.deviceId, d.state, d.softwareVersion ?? '-', d.startedAt ?? '-', d.http[0] ?? '-']))
      return { text, code: EXIT.OK }
    }
    const onDevice = command.perDevice({ broker, args, values, io, timeoutMs, prepared })
    const reports = await eachLimited(targets(broker, values), parallel, async (target): Promise<DeviceReport> => {
      if (typeof target === 'string') return { deviceId: target, outcome: 'unknown-device', ok: false, reached: false, summary: 'no registration on this broker' }
      // A request to an offline device would wait in its broker session and be refused when it is back (docs/events.md "MQTT").
      if (target.state !== 'online') return { deviceId: target.deviceId, outcome: 'offline', ok: false, reached: false, summary: `last registered ${target.registration?.registeredAt ?? 'never'}` }
      return onDevice(target).catch((error: unknown) => failed(target.deviceId, error))
    })
    const code = reports.some((r) => !r.reached) ? EXIT.NETWORK : reports.some((r) => !r.ok) ? EXIT.DEVICE : EXIT.OK
    const text = values.json ? JSON.stringify(reports, null, 2) : table(['device', 'outcome', 'detail'], reports.map((r) => [r.deviceId, r.outcome, r.summary]))
    return { text, code }
  } finally {
    await broker.close()
  }
}
