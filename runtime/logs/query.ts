import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { createInterface } from 'node:readline'
import type { LogLine, LogPage, LogQuery } from '../../shared/aihost/types.ts'

/** pino's numeric levels. */
export const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const

/** `device.<n>.log` files of the log folder, oldest first (pino-roll numbers them upwards). */
export function logFiles(logDir: string): string[] {
  if (!existsSync(logDir)) return []
  const number = (name: string) => Number(/\.(\d+)\.log$/.exec(name)?.[1] ?? 0)
  return readdirSync(logDir)
    .filter((name) => /^device\.(?:.*\.)?\d+\.log$/.test(name))
    .sort((a, b) => number(a) - number(b))
    .map((name) => path.join(logDir, name))
}

/** Whether a string anywhere in `value` (nested objects such as `err` too) holds `text`. */
const holdsText = (value: unknown, text: string): boolean =>
  typeof value === 'string' ? value.toLowerCase().includes(text)
    : typeof value === 'object' && value !== null ? Object.values(value).some((inner) => holdsText(inner, text))
      : false

const matches = (entry: Record<string, unknown>, query: LogQuery, minLevel: number, text: string | null) => {
  if (typeof entry.level === 'number' && entry.level < minLevel) return false
  const time = typeof entry.time === 'number' ? entry.time : NaN
  if (query.from !== undefined && !(time >= query.from)) return false
  if (query.to !== undefined && !(time <= query.to)) return false
  if (query.requestId !== undefined && entry.requestId !== query.requestId) return false
  if (text && !holdsText(entry, text)) return false
  return true
}

/**
 * Reads the rotating log files line by line (never whole) and returns one page of the
 * matching entries, newest first. Disk use is bounded by the rotation, so is the scan; memory
 * by the page: only the newest `pageNo × pageSize` matches are kept while counting the rest.
 */
export async function queryLogFiles(logDir: string, query: LogQuery): Promise<LogPage> {
  const minLevel = LEVELS[query.level ?? 'trace']
  const text = query.text ? query.text.toLowerCase() : null
  const files = logFiles(logDir)
  const keep = query.pageNo * query.pageSize
  // The newest `keep` matching lines, as text (cheaper than objects), in a ring.
  const window: string[] = new Array(keep)
  let total = 0
  let bytesScanned = 0
  for (const file of files) {
    try {
      bytesScanned += statSync(file).size
      const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity })
      for await (const line of lines) {
        if (!line.startsWith('{')) continue
        let entry: Record<string, unknown>
        try {
          entry = JSON.parse(line)
        } catch {
          continue // a line cut by a crash
        }
        if (matches(entry, query, minLevel, text)) window[total++ % keep] = line
      }
    } catch (error) {
      // Rotation removed the oldest file between the listing and its reading: its lines are gone from disk.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
  }
  // Newest first: the page holds matches total-1-start … total-start-pageSize.
  const start = (query.pageNo - 1) * query.pageSize
  // Every line the filter kept is a pino line: numeric level and time.
  const rows: LogLine[] = []
  for (let index = total - 1 - start; index >= Math.max(0, total - start - query.pageSize); index--) rows.push(JSON.parse(window[index % keep]!))
  return { total, pageNo: query.pageNo, pageSize: query.pageSize, rows, files: files.length, bytesScanned }
}
