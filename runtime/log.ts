import path from 'node:path'
import { multistream, pino } from 'pino'
import type { LogFileHealth } from '../shared/aihost/types.ts'
import type { Logger } from '../shared/handler.ts'

/** Fields that may carry secrets are censored wherever they appear in a log object. */
export const REDACTED_PATHS = ['mtk', 'pwd', 'oldPwd', 'newPwd', 'password', 'token', 'authorization', '*.mtk', '*.pwd', '*.password', '*.token', '*.authorization', 'headers.mtk', 'headers.authorization',
  // backup and factory reset (docs/system.md "Backup, restore and factory reset")
  'passphrase', '*.passphrase', 'confirmationToken', '*.confirmationToken']

/** Log lines kept in memory while the log file cannot be written (a full disk); beyond, lines are dropped and counted. */
const UNWRITTEN_LOG_BYTES = 1024 * 1024

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { pid: process.pid } }, destination as never) as unknown as Logger
}

/**
 * The device logger: JSON lines to stdout and to a rotating file under `<DATA_DIR>/logs`
 * (pino-roll). The file rotates at `logFileMaxBytes` and only `logFileCount` rotated files are
 * kept, so disk use stays below (count + 1) × max bytes; `QueryLogs` reads these files.
 *
 * A log file that cannot be written (ENOSPC on a full disk, EIO) never stops the device:
 * up to 1 MB of lines wait in memory and are written once the file takes them again, further
 * lines are dropped and counted (`health()`, shown by QueryDeviceStatus); stdout keeps every line.
 */
export async function createDeviceLogger(options: { level: string; logDir: string; maxBytes: number; count: number }): Promise<{ log: Logger; flush(): void; health(): LogFileHealth }> {
  const { default: roll } = await import('pino-roll')
  const file = await roll({
    file: path.join(options.logDir, 'device'),
    extension: '.log',
    size: `${Math.max(1, Math.ceil(options.maxBytes / 1024))}k`,
    mkdir: true,
    limit: { count: Math.max(1, options.count), removeOtherLogFiles: true },
    maxLength: UNWRITTEN_LOG_BYTES,
  })
  const health: LogFileHealth = { writable: true, writeErrors: 0, droppedLines: 0, lastError: null, lastErrorAt: null }
  file.on('error', (error: NodeJS.ErrnoException) => {
    if (health.writable) process.stdout.write(`${JSON.stringify({ level: 50, time: Date.now(), pid: process.pid, msg: 'log file not writable; lines wait in memory, then are dropped and counted', code: error.code })}\n`)
    health.writable = false
    health.writeErrors += 1
    health.lastError = error.code ?? error.message
    health.lastErrorAt = Date.now()
  })
  file.on('drop', () => { health.droppedLines += 1 })
  file.on('write', () => { health.writable = true })
  // stdout is a pipe to the supervisor; once it is gone (killed), writing there fails with
  // EPIPE, which must not end the device mid-stop: lines still go to the file.
  process.stdout.on('error', () => {})
  // The streams take every level: the logger's own level decides, and can change while running (runtime/system/log-levels.ts).
  const streams = multistream([
    { level: 'trace', stream: process.stdout },
    { level: 'trace', stream: file },
  ])
  const log = pino({ level: options.level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { pid: process.pid } }, streams)
  return {
    log: log as unknown as Logger,
    flush: () => { try { file.flushSync() } catch { /* not open yet, or the disk is full */ } },
    health: () => ({ ...health }),
  }
}
