import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { createInterface } from 'node:readline'
import type { LogPage, LogQuery } from '../../shared/aihost/types.ts'

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

const matches = (entry: Record<string, unknown>, query: LogQuery, minLevel: number, text: string | null) => {
  if (typeof entry.level === 'number' && entry.level < minLevel) return false
  const time = typeof entry.time === 'number' ? entry.time : NaN
  if (query.from !== undefined && !(time >= query.from)) return false
  if (query.to !== undefined && !(time <= query.to)) return false
  if (query.requestId !== undefined && entry.requestId !== query.requestId) return false
  if (text && !Object.values(entry).some((value) => typeof value === 'string' && value.toLowerCase().includes(text))) return false
  return true
}

/**
 * Reads the rotating log files line by line (never whole) and returns one page of the
 * matching entries, newest first. Disk use is bounded by the rotation, so is the scan.
 */
export async function queryLogFiles(logDir: string, query: LogQuery): Promise<LogPage> {
  const minLevel = LEVELS[query.level ?? 'trace']
  const text = query.text ? query.text.toLowerCase() : null
  const files = logFiles(logDir)
  // Matching lines are kept as text (cheaper than objects) until the page is cut.
  const hits: string[] = []
  let bytesScanned = 0
  for (const file of files) {
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
      if (matches(entry, query, minLevel, text)) hits.push(line)
    }
  }
  const total = hits.length
  const start = (query.pageNo - 1) * query.pageSize
  // Newest first: count from the end.
  const rows = hits.slice(Math.max(0, total - start - query.pageSize), Math.max(0, total - start)).reverse().map((line) => JSON.parse(line))
  return { total, pageNo: query.pageNo, pageSize: query.pageSize, rows, files: files.length, bytesScanned }
}
