import { randomUUID } from 'node:crypto'
import { eq } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { schedules } from '../../shared/db/schema/index.ts'
import { KeyedMutex } from '../keyed-mutex.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { Identity, Logger } from '../../shared/handler.ts'
import type { DeviceTimeZone } from '../../shared/system/types.ts'
import { localIso } from '../../shared/system/time-zone.ts'
import type {
  AddScheduleInput, PageSchedulesInput, ScheduleGate, SchedulesService, ScheduleView, UpdateScheduleInput,
} from '../../shared/schedules/types.ts'
import { scheduleState } from '../../shared/schedules/windows.ts'
import { checkSchedule } from './validate.ts'
import { scheduleUsers, usersMessage } from './users.ts'

type Row = typeof schedules.$inferSelect

export interface ScheduleServiceOptions {
  db: Db
  /** The clock schedules are read on (the device's, or SCHEDULE_CLOCK_START's in tests). */
  now: () => number
  time: DeviceTimeZone
  log: Logger
}

/** A gate computed at `at`, good until its next change (or an hour, to notice clock steps and far exceptions). */
interface CachedGate { gate: ScheduleGate; at: number; validUntil: number }
const RECHECK_MS = 3_600_000

/**
 * `ctx.schedules` (spec 4.10 Schedule). Schedules are kept in memory; whether one is on is
 * computed when asked and cached until its next change, so tasks and policies that ask on
 * every frame follow window boundaries to the frame, and an edit or a time zone change (which
 * drop the cache) applies from their next frame without a restart.
 */
export class ScheduleService implements SchedulesService {
  readonly #rows = new Map<string, Row>()
  readonly #gates = new Map<string, CachedGate>()
  /** Writes one at a time: a name is checked unique and stored in one step, a deleted schedule stays deleted. */
  readonly #writes = new KeyedMutex()

  constructor(private readonly options: ScheduleServiceOptions) {
    options.time.onTimeZoneChange(() => this.#gates.clear())
  }

  async start(): Promise<void> {
    for (const row of await this.options.db.select().from(schedules)) this.#rows.set(row.scheduleId, row)
  }

  gate(scheduleId: string): ScheduleGate | null {
    const row = this.#rows.get(scheduleId)
    if (!row) return null
    const now = this.options.now()
    const cached = this.#gates.get(scheduleId)
    if (cached && now >= cached.at && now < cached.validUntil) return cached.gate
    const zone = this.options.time.timeZone()
    const state = scheduleState(row, zone, now)
    const gate = { scheduleName: row.scheduleName, ...state, nextChangeLocal: state.nextChange === null ? null : localIso(state.nextChange, zone) }
    this.#gates.set(scheduleId, { gate, at: now, validUntil: Math.min(state.nextChange ?? Infinity, now + RECHECK_MS) })
    return gate
  }

  add(input: AddScheduleInput, identity: Identity): Promise<{ scheduleId: string }> {
    return this.#writes.run('', () => this.#add(input, identity))
  }

  async #add(input: AddScheduleInput, identity: Identity): Promise<{ scheduleId: string }> {
    const exceptions = input.exceptions ?? []
    checkSchedule(input.windows, exceptions)
    this.#uniqueName(input.scheduleName, null)
    const now = this.options.now()
    const row: Row = {
      scheduleId: randomUUID(), scheduleName: input.scheduleName, description: input.description ?? '', windows: input.windows, exceptions,
      createdBy: identity.accountName, createdAt: now, updatedAt: now,
    }
    await this.options.db.insert(schedules).values(row)
    this.#rows.set(row.scheduleId, row)
    this.options.log.info({ scheduleId: row.scheduleId, scheduleName: row.scheduleName }, 'schedule added')
    return { scheduleId: row.scheduleId }
  }

  update(input: UpdateScheduleInput): Promise<ScheduleView> {
    return this.#writes.run('', () => this.#update(input))
  }

  async #update(input: UpdateScheduleInput): Promise<ScheduleView> {
    const old = this.#row(input.scheduleId)
    const row: Row = {
      ...old,
      scheduleName: input.scheduleName ?? old.scheduleName, description: input.description ?? old.description,
      windows: input.windows ?? old.windows, exceptions: input.exceptions ?? old.exceptions, updatedAt: this.options.now(),
    }
    checkSchedule(row.windows, row.exceptions)
    this.#uniqueName(row.scheduleName, row.scheduleId)
    await this.options.db.update(schedules).set(row).where(eq(schedules.scheduleId, row.scheduleId))
    this.#rows.set(row.scheduleId, row)
    // At once: the users' next frame reads the new windows.
    this.#gates.delete(row.scheduleId)
    this.options.log.info({ scheduleId: row.scheduleId, scheduleName: row.scheduleName }, 'schedule updated')
    return this.get(row.scheduleId)
  }

  remove(scheduleId: string): Promise<void> {
    return this.#writes.run('', () => this.#remove(scheduleId))
  }

  async #remove(scheduleId: string): Promise<void> {
    const row = this.#row(scheduleId)
    await this.options.db.transaction(async (tx) => {
      const users = await scheduleUsers(tx, scheduleId)
      if (users.taskIds.length > 0 || users.policies.length > 0)
        throw new ApiError('ScheduleInUse', { details: { scheduleId, ...users }, msgText: `Schedule "${row.scheduleName}" is used by ${usersMessage(users)}: change them first.` })
      await tx.delete(schedules).where(eq(schedules.scheduleId, scheduleId))
    })
    this.#rows.delete(scheduleId)
    this.#gates.delete(scheduleId)
    this.options.log.info({ scheduleId, scheduleName: row.scheduleName }, 'schedule deleted')
  }

  async page(query: PageSchedulesInput) {
    const needle = query.scheduleName?.toLowerCase() ?? ''
    const matching = [...this.#rows.values()].filter((r) => r.scheduleName.toLowerCase().includes(needle))
      .sort((a, b) => a.createdAt - b.createdAt || a.scheduleId.localeCompare(b.scheduleId))
    const rows = matching.slice((query.pageNum - 1) * query.pageSize, query.pageNum * query.pageSize)
    return { total: matching.length, rows: await Promise.all(rows.map((r) => this.#view(r))), ...this.clockInfo() }
  }

  async get(scheduleId: string): Promise<ScheduleView> {
    return this.#view(this.#row(scheduleId))
  }

  /** The schedules' clock now, and the device's zone: what "on" is measured against. */
  clockInfo() {
    const now = this.options.now()
    const timeZone = this.options.time.timeZone()
    return { now: String(now), localTime: localIso(now, timeZone), timeZone }
  }

  async #view(row: Row): Promise<ScheduleView> {
    const gate = this.gate(row.scheduleId)!
    return {
      scheduleId: row.scheduleId, scheduleName: row.scheduleName, description: row.description, windows: row.windows, exceptions: row.exceptions,
      timeZone: this.options.time.timeZone(), active: gate.active,
      nextChange: gate.nextChange === null ? null : String(gate.nextChange), nextChangeLocal: gate.nextChangeLocal,
      users: await scheduleUsers(this.options.db, row.scheduleId), updateTime: String(row.updatedAt),
    }
  }

  #row(scheduleId: string): Row {
    const row = this.#rows.get(scheduleId)
    if (!row) throw new ApiError('ScheduleNotFound', { details: { scheduleId } })
    return row
  }

  #uniqueName(name: string, self: string | null): void {
    for (const row of this.#rows.values())
      if (row.scheduleName === name && row.scheduleId !== self) throw new ApiError('ScheduleNameExists', { details: { scheduleName: name, scheduleId: row.scheduleId } })
  }
}
