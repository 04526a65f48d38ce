import { Type, type Static } from '@sinclair/typebox'
import type { Identity } from '../handler.ts'
import { PageNumber, PageSize } from '../http/paging.ts'
import { DAYS, type DateException, type WeeklyWindow } from './windows.ts'

/**
 * Schedules (spec 4.10 Schedule, `/gtw/cwai/schedule/`): weekly windows in the device's time
 * zone with date exceptions. A stream task analyses, and an alarm policy fires, only while its
 * schedule is on (shared/schedules/windows.ts decides when). `ctx.schedules`; runtime/schedules/.
 */

/** Most windows a schedule holds (16 a day), exceptions it lists, and windows an exception holds. */
export const SCHEDULE_LIMITS = { windows: 112, windowsPerDay: 16, exceptions: 366, exceptionWindows: 16 } as const

export const ScheduleId = Type.String({ minLength: 1, maxLength: 64, description: 'The id `add` answered.' })
const Name = Type.String({ minLength: 1, maxLength: 64 })
const Start = Type.String({ pattern: '^(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9])?$', description: 'Local time HH:MM or HH:MM:SS.' })
const End = Type.String({ pattern: '^(?:(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9])?|24:00(?::00)?)$', description: 'Local time HH:MM[:SS] or 24:00; at or before `start`: the window runs into the next day.' })
const Window = { start: Start, end: End }
const WeeklyWindowSchema = Type.Object({
  day: Type.Union(DAYS.map((d) => Type.Literal(d)), { description: 'The day the window starts on.' }),
  ...Window,
}, { additionalProperties: false })
const ExceptionSchema = Type.Object({
  date: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'A local date, YYYY-MM-DD.' }),
  windows: Type.Array(Type.Object(Window, { additionalProperties: false }), { maxItems: SCHEDULE_LIMITS.exceptionWindows, description: 'The windows of that date instead of the weekly ones; empty: off all day (a holiday).' }),
}, { additionalProperties: false })

const Windows = Type.Array(WeeklyWindowSchema, { maxItems: SCHEDULE_LIMITS.windows, description: 'Weekly windows; several a day, overlapping ones merge.' })
const Exceptions = Type.Array(ExceptionSchema, { maxItems: SCHEDULE_LIMITS.exceptions, description: 'Dates whose windows replace the weekly ones (holidays).' })
const Description = Type.String({ maxLength: 256 })

export const AddScheduleInput = Type.Object({
  scheduleName: Name,
  description: Type.Optional(Description),
  windows: Windows,
  exceptions: Type.Optional(Exceptions),
}, { additionalProperties: false })
export type AddScheduleInput = Static<typeof AddScheduleInput>

export const UpdateScheduleInput = Type.Object({
  scheduleId: ScheduleId,
  scheduleName: Type.Optional(Name),
  description: Type.Optional(Description),
  windows: Type.Optional(Windows),
  exceptions: Type.Optional(Exceptions),
}, { additionalProperties: false })
export type UpdateScheduleInput = Static<typeof UpdateScheduleInput>

export const PageSchedulesInput = Type.Object({
  pageNum: PageNumber(),
  pageSize: PageSize(20, 500),
  scheduleName: Type.Optional(Type.String({ maxLength: 64, description: 'Substring of the name.' })),
}, { additionalProperties: false })
export type PageSchedulesInput = Static<typeof PageSchedulesInput>

export const ScheduleIdInput = Type.Object({ scheduleId: ScheduleId }, { additionalProperties: false })

/** What refers to a schedule (a schedule in use cannot be deleted). */
export interface ScheduleUsers {
  taskIds: string[]
  policies: { policyId: string; policyName: string }[]
}

export interface ScheduleView {
  scheduleId: string
  scheduleName: string
  description: string
  windows: WeeklyWindow[]
  exceptions: DateException[]
  /** The device's time zone the windows are read in. */
  timeZone: string
  /** Whether the schedule is on now, and the next instant (ms string) and local time it turns on or off; null: never again. */
  active: boolean
  nextChange: string | null
  nextChangeLocal: string | null
  users: ScheduleUsers
  updateTime: string
}

/** A schedule as its users see it at one instant (cheap: cached until its next change). */
export interface ScheduleGate {
  scheduleName: string
  active: boolean
  /** ms, and as local time; null: never changes again. */
  nextChange: number | null
  nextChangeLocal: string | null
}

export interface SchedulesService {
  add(input: AddScheduleInput, identity: Identity): Promise<{ scheduleId: string }>
  /** Applies at once: tasks and policies using it follow the new windows from their next frame. */
  update(input: UpdateScheduleInput): Promise<ScheduleView>
  /** ScheduleNotFound; ScheduleInUse (details name the tasks and policies) while anything uses it. */
  remove(scheduleId: string): Promise<void>
  page(query: PageSchedulesInput): Promise<{ total: number; rows: ScheduleView[] } & ScheduleClock>
  /** ScheduleNotFound. */
  get(scheduleId: string): Promise<ScheduleView>
  /** The schedules' clock now: what `active` is measured against. */
  clockInfo(): ScheduleClock
  /** The schedule now; null when there is none. Cheap: asked on every analysed frame. */
  gate(scheduleId: string): ScheduleGate | null
}

export interface ScheduleClock {
  /** ms string. */
  now: string
  /** The same instant in the device's time zone, ISO 8601 with its offset. */
  localTime: string
  timeZone: string
}
