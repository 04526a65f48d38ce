import { statSync } from 'node:fs'
import path from 'node:path'
import type { Db } from '../db/client.ts'
import { ApiError, invalidParam } from '../../shared/errors/index.ts'
import type { Logger } from '../../shared/handler.ts'
import type { DebugService, DebugSettings, LogFileInfo, LogLevel } from '../../shared/system/types.ts'
import { logFiles } from '../logs/query.ts'
import type { LogLevels } from './log-levels.ts'
import { storedSetting } from './stored-setting.ts'

interface Stored { logLevel: LogLevel; debugAreas: string[] }

/**
 * `ctx.debug` (spec 4.10 System "debug"): the log level and per-area debug switches, applied
 * to the running process at once (log-levels.ts) and stored, so a restart keeps them; and the
 * log files for download.
 */
export class DebugSettingsService implements DebugService {
  readonly #stored: ReturnType<typeof storedSetting<Stored>>

  constructor(private readonly options: { db: Db; now: () => number; log: Logger; levels: LogLevels; logDir: string }) {
    this.#stored = storedSetting<Stored>(options.db, 'system.debug', options.now)
  }

  async start(): Promise<void> {
    const stored = await this.#stored.read()
    if (stored) this.options.levels.apply(stored.logLevel, stored.debugAreas)
  }

  settings(): DebugSettings {
    const { levels } = this.options
    return { logLevel: levels.level, areas: levels.areas().map((name) => ({ name, debug: levels.isDebug(name) })) }
  }

  async set(change: { logLevel?: LogLevel; areas?: Record<string, boolean> }): Promise<DebugSettings> {
    const { levels } = this.options
    const known = levels.areas()
    for (const name of Object.keys(change.areas ?? {}))
      if (!known.includes(name)) throw invalidParam(`/areas/${name}`, `is not an area of this device (${known.join(', ')})`)
    const debugAreas = known.filter((name) => change.areas?.[name] ?? levels.isDebug(name))
    const logLevel = change.logLevel ?? levels.level
    await this.#stored.write({ logLevel, debugAreas })
    levels.apply(logLevel, debugAreas)
    this.options.log.warn({ logLevel, debugAreas }, 'log level changed')
    return this.settings()
  }

  logFiles(): LogFileInfo[] {
    const files = logFiles(this.options.logDir)
    return files.flatMap((file, i) => {
      try {
        const s = statSync(file)
        return [{ name: path.basename(file), sizeBytes: s.size, modifiedAt: Math.round(s.mtimeMs), active: i === files.length - 1 }]
      } catch {
        return [] // rotated away meanwhile
      }
    })
  }

  logFile(name?: string): string {
    const files = this.logFiles()
    const file = name === undefined ? files.at(-1) : files.find((f) => f.name === name)
    if (!file) throw new ApiError('LogFileNotFound', { details: { name: name ?? null } })
    return path.join(this.options.logDir, file.name)
  }
}
