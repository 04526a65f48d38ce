import { execFile } from 'node:child_process'
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { ApiError } from '../../shared/errors/index.ts'
import type { TimeServiceType } from '../../shared/system/types.ts'

/**
 * Where NTP servers are written (docs/system.md "System settings"): the host's running time service,
 * picked by type key like the network backends. Each writes one file of its own (the host's
 * own configuration stays as it is) and tells the service to read it again.
 */
interface TimeBackend {
  /** systemd units whose `is-active` says the service runs. */
  units: string[]
  /** The file the device owns, relative to the root. */
  file: string
  /** Whether the file's folder must exist already (the service only reads it when configured to). */
  folderMustExist: boolean
  render(servers: string[]): string
  apply: [string, string[]]
}

const HEADER = '# Written by the edge device (System/SetTimeParam); removed when its NTP servers are cleared.\n'

export const TIME_BACKENDS: Record<TimeServiceType, TimeBackend> = {
  // A drop-in: NTP= here replaces the main file's list (timesyncd.conf(5)).
  'systemd-timesyncd': {
    units: ['systemd-timesyncd'], file: 'etc/systemd/timesyncd.conf.d/50-cwai.conf', folderMustExist: false,
    render: (servers) => `${HEADER}[Time]\nNTP=${servers.join(' ')}\n`,
    apply: ['systemctl', ['restart', 'systemd-timesyncd']],
  },
  // chrony 4 reads `sourcedir /etc/chrony/sources.d` (Debian's default chrony.conf) on `reload sources`.
  chrony: {
    units: ['chrony', 'chronyd'], file: 'etc/chrony/sources.d/cwai.sources', folderMustExist: true,
    render: (servers) => `${HEADER}${servers.map((s) => `server ${s} iburst\n`).join('')}`,
    apply: ['chronyc', ['reload', 'sources']],
  },
}

export type CommandRunner = (command: string, args: string[]) => Promise<{ code: number | null; stdout: string; stderr: string }>

export const runCommand: CommandRunner = (command, args) => new Promise((resolve) => {
  execFile(command, args, { timeout: 10_000 }, (error, stdout, stderr) => {
    const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : null) : 0
    resolve({ code, stdout: String(stdout), stderr: String(stderr || (error && code === null ? error.message : '')) })
  })
})

const unavailable = (reason: string) => new ApiError('TimeServiceUnavailable', { details: { reason } })
const DENIED = /permission denied|not permitted|access denied|interactive authentication required|EACCES|EPERM|EROFS/i

/** The time service to write to: TIME_SERVICE when set (`none` refuses), else the first that runs (chrony, then systemd-timesyncd). */
export async function detectTimeService(setting: string, run: CommandRunner): Promise<{ type: TimeServiceType | null; reason: string | null }> {
  if (setting === 'none') return { type: null, reason: 'TIME_SERVICE is none' }
  if (setting) {
    if (!(setting in TIME_BACKENDS)) return { type: null, reason: `TIME_SERVICE ${setting} is not one of ${Object.keys(TIME_BACKENDS).join(', ')}, none` }
    return { type: setting as TimeServiceType, reason: null }
  }
  for (const [type, backend] of Object.entries(TIME_BACKENDS) as [TimeServiceType, TimeBackend][])
    for (const unit of backend.units)
      if ((await run('systemctl', ['is-active', unit])).stdout.trim() === 'active') return { type, reason: null }
  return { type: null, reason: 'neither chrony nor systemd-timesyncd runs on this host (systemctl is-active)' }
}

/**
 * Writes `servers` to the backend's file (removes it for an empty list) and applies it. When
 * applying fails, the file as it was comes back: TimeChangeNotPermitted or TimeServiceFailed.
 */
export async function writeNtpServers(type: TimeServiceType, servers: string[], options: { root: string; run: CommandRunner }): Promise<void> {
  const backend = TIME_BACKENDS[type]
  const file = path.join(options.root, backend.file)
  const folder = path.dirname(file)
  if (backend.folderMustExist && !(await stat(folder).catch(() => null))?.isDirectory())
    throw unavailable(`${type} has no ${folder} (chrony 4 with \`sourcedir ${path.posix.join('/', path.posix.dirname(backend.file))}\` is needed)`)
  const previous = await readFile(file, 'utf8').catch(() => null)
  const restore = () => (previous === null ? rm(file, { force: true }) : writeFile(file, previous))
  try {
    await mkdir(folder, { recursive: true })
    if (servers.length) await writeFile(file, backend.render(servers))
    else await rm(file, { force: true })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') throw new ApiError('TimeChangeNotPermitted', { details: { file, code } })
    throw error
  }
  const [command, args] = backend.apply
  const applied = await options.run(command, args)
  if (applied.code === 0) return
  await restore().catch(() => undefined)
  // The previous file is back; the service is told again, so it runs as before.
  await options.run(command, args).catch(() => undefined)
  const reason = `${command} ${args.join(' ')}: ${(applied.stderr || applied.stdout).trim().slice(0, 300) || `exit code ${applied.code}`}`
  throw new ApiError(DENIED.test(applied.stderr) ? 'TimeChangeNotPermitted' : 'TimeServiceFailed', { details: { type, reason } })
}
