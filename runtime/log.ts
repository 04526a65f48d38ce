import path from 'node:path'
import { multistream, pino } from 'pino'
import type { Logger } from '../shared/handler.ts'

/** Fields that may carry secrets are censored wherever they appear in a log object. */
export const REDACTED_PATHS = ['mtk', 'pwd', 'oldPwd', 'newPwd', 'password', 'token', 'authorization', '*.mtk', '*.pwd', '*.password', '*.token', '*.authorization', 'headers.mtk', 'headers.authorization']

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { pid: process.pid } }, destination as never) as unknown as Logger
}

/**
 * The device logger: JSON lines to stdout and to a rotating file under `<DATA_DIR>/logs`
 * (pino-roll). The file rotates at `logFileMaxBytes` and only `logFileCount` rotated files are
 * kept, so disk use stays below (count + 1) × max bytes; `QueryLogs` reads these files.
 */
export async function createDeviceLogger(options: { level: string; logDir: string; maxBytes: number; count: number }): Promise<{ log: Logger; flush(): void }> {
  const { default: roll } = await import('pino-roll')
  const file = await roll({
    file: path.join(options.logDir, 'device'),
    extension: '.log',
    size: `${Math.max(1, Math.ceil(options.maxBytes / 1024))}k`,
    mkdir: true,
    limit: { count: Math.max(1, options.count), removeOtherLogFiles: true },
  })
  const streams = multistream([
    { level: options.level as 'info', stream: process.stdout },
    { level: options.level as 'info', stream: file },
  ])
  const log = pino({ level: options.level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { pid: process.pid } }, streams)
  return { log: log as unknown as Logger, flush: () => { try { file.flushSync() } catch { /* not open yet */ } } }
}
