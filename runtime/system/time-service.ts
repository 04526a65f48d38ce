import { isIP } from 'node:net'
import type { Db } from '../db/client.ts'
import { ApiError, invalidParam } from '../../shared/errors/index.ts'
import type { Logger } from '../../shared/handler.ts'
import { isIanaTimeZone, localIso, utcOffsetMinutes } from '../../shared/system/time-zone.ts'
import type { DriftSample, TimeService, TimeStatus } from '../../shared/system/types.ts'
import { sntpQuery } from './sntp.ts'
import { storedSetting } from './stored-setting.ts'
import { detectTimeService, runCommand, writeNtpServers, type CommandRunner } from './time-backends.ts'

const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/
const DRIFT_TIMEOUT_MS = 2000

interface StoredTime { timeZone?: string; ntpServers?: string[] }

export interface TimeServiceOptions {
  db: Db
  now: () => number
  log: Logger
  /** TIME_SERVICE. */
  service: string
  /** Prefix of the time service's files (tests); default `/`. */
  root?: string
  run?: CommandRunner
}

/**
 * `ctx.time` (spec 4.10 System "time"): the device's time zone (an IANA name, stored; what
 * schedules read through `timeZone()`), the NTP servers written to the host's time service,
 * and the clock's drift measured against them.
 */
export class HostTimeService implements TimeService {
  readonly #stored: ReturnType<typeof storedSetting<StoredTime>>
  readonly #listeners = new Set<(timeZone: string) => void>()
  /** Until a zone is set: the process's own (TZ, else the host's /etc/localtime). */
  #timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'
  #ntpServers: string[] = []

  constructor(private readonly options: TimeServiceOptions) {
    this.#stored = storedSetting<StoredTime>(options.db, 'system.time', options.now)
  }

  async start(): Promise<void> {
    const stored = await this.#stored.read()
    if (stored?.timeZone && isIanaTimeZone(stored.timeZone)) this.#timeZone = stored.timeZone
    this.#ntpServers = stored?.ntpServers ?? []
  }

  timeZone(): string {
    return this.#timeZone
  }

  onTimeZoneChange(listener: (timeZone: string) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  async status(): Promise<TimeStatus> {
    const now = this.options.now()
    return {
      timeZone: this.#timeZone, now, localTime: localIso(now, this.#timeZone), utcOffsetMinutes: utcOffsetMinutes(now, this.#timeZone),
      ntpServers: [...this.#ntpServers], timeService: await detectTimeService(this.options.service, this.options.run ?? runCommand),
    }
  }

  async set(input: { timeZone?: string; ntpServers?: string[] }): Promise<TimeStatus> {
    if (input.timeZone !== undefined && !isIanaTimeZone(input.timeZone)) throw new ApiError('TimeZoneUnknown', { details: { timeZone: input.timeZone.slice(0, 64) } })
    const servers = input.ntpServers?.map((s) => s.trim().toLowerCase())
    servers?.forEach((server, i) => {
      if (!isIP(server) && !HOST_NAME.test(server)) throw invalidParam(`/ntpServers/${i}`, 'must be a host name or an IP address (no port: time services use 123)')
      if (servers.indexOf(server) !== i) throw invalidParam(`/ntpServers/${i}`, 'is listed twice')
    })
    if (servers && servers.join(' ') !== this.#ntpServers.join(' ')) {
      const run = this.options.run ?? runCommand
      const service = await detectTimeService(this.options.service, run)
      if (!service.type) throw new ApiError('TimeServiceUnavailable', { details: { reason: service.reason } })
      await writeNtpServers(service.type, servers, { root: this.options.root ?? '/', run })
      this.#ntpServers = servers
      this.options.log.info({ timeService: service.type, ntpServers: servers }, 'NTP servers written to the time service')
    }
    const zoneChanged = input.timeZone !== undefined && input.timeZone !== this.#timeZone
    if (zoneChanged) this.#timeZone = input.timeZone!
    await this.#stored.write({ timeZone: this.#timeZone, ntpServers: this.#ntpServers })
    if (zoneChanged) {
      this.options.log.info({ timeZone: this.#timeZone }, 'device time zone changed')
      for (const listener of this.#listeners) {
        try {
          listener(this.#timeZone)
        } catch (error) {
          this.options.log.error({ err: (error as Error).message }, 'a time zone listener failed')
        }
      }
    }
    return this.status()
  }

  async drift(): Promise<{ measuredAt: number; samples: DriftSample[] }> {
    const measuredAt = this.options.now()
    const samples = await Promise.all(this.#ntpServers.map(async (server): Promise<DriftSample> => {
      try {
        return { server, ...(await sntpQuery(server, { timeoutMs: DRIFT_TIMEOUT_MS, now: this.options.now })), error: null }
      } catch (error) {
        return { server, offsetMs: null, delayMs: null, stratum: null, error: (error as Error).message }
      }
    }))
    return { measuredAt, samples }
  }
}
