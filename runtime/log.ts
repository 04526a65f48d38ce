import { pino } from 'pino'
import type { Logger } from '../shared/handler.ts'

/** Fields that may carry secrets are censored wherever they appear in a log object. */
export const REDACTED_PATHS = ['mtk', 'pwd', 'oldPwd', 'newPwd', 'password', 'token', 'authorization', '*.mtk', '*.pwd', '*.password', '*.token', '*.authorization', 'headers.mtk', 'headers.authorization']

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { pid: process.pid } }, destination as never) as unknown as Logger
}
