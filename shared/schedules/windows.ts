import { utcOffsetMinutes, zonedParts } from '../system/time-zone.ts'

/**
 * Weekly schedules evaluated in the device's time zone (spec 4.10 Schedule): when a schedule
 * is on at an instant, and when that next changes. Pure functions over Intl's zone data, so
 * the runtime, its tests (any clock) and the console agree.
 *
 * Local times become instants day by day. A local time that a spring-forward transition skips
 * is taken as the clock would show it had it not jumped (02:30 → 03:30 summer time), a local
 * time that a fall-back transition repeats as its first occurrence; a window that this would
 * leave empty (02:00–03:00 on the night the clock jumps from 02:00 to 03:00) keeps its length
 * from its start. So a transition neither drops nor doubles a window.
 */

/** Days as stored: index = JavaScript's weekday (0 = Sunday). */
export const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const
export type Day = (typeof DAYS)[number]

export interface TimeWindow {
  /** `HH:MM` or `HH:MM:SS`, local time; `end` may be `24:00`, and an end at or before the start runs into the next day. */
  start: string
  end: string
}
export interface WeeklyWindow extends TimeWindow { day: Day }
/** A date (`YYYY-MM-DD`, local) whose windows replace the weekly ones: none = off all day (a holiday). */
export interface DateException { date: string; windows: TimeWindow[] }

export interface ScheduleSpec {
  windows: readonly WeeklyWindow[]
  exceptions: readonly DateException[]
}

export interface ScheduleState {
  active: boolean
  /** The next instant (ms) the schedule turns on or off; null when it never changes again (within MAX_HORIZON_DAYS). */
  nextChange: number | null
}

const DAY_MS = 86_400_000
/** How far ahead a change is looked for: a year of exceptions and then some. */
export const MAX_HORIZON_DAYS = 400

/** Seconds after local midnight of `HH:MM[:SS]` (24:00 → 86,400). */
export const secondsOfDay = (time: string): number => {
  const [h = 0, m = 0, s = 0] = time.split(':').map(Number)
  return h * 3600 + m * 60 + s
}

/** Days since 1970-01-01 of a civil date. */
export const dayNumber = (year: number, month: number, day: number): number => Math.floor(Date.UTC(year, month - 1, day) / DAY_MS)
export const dayNumberOfDate = (date: string): number => {
  const [y = 0, m = 0, d = 0] = date.split('-').map(Number)
  return dayNumber(y, m, d)
}
/** Whether `YYYY-MM-DD` names a real calendar date. */
export const isCalendarDate = (date: string): boolean => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date)
  if (!match) return false
  const [y, m, d] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const back = new Date(Date.UTC(y, m - 1, d))
  return back.getUTCFullYear() === y && back.getUTCMonth() === m - 1 && back.getUTCDate() === d
}

const offsetMs = (instant: number, zone: string) => utcOffsetMinutes(instant, zone) * 60_000

/**
 * The instant of local time `seconds` after midnight of day `day` in `zone`: a skipped time
 * moves forward by the jump, a repeated one is its first occurrence (RFC 5545 / Temporal's
 * "compatible").
 */
export function instantOf(day: number, seconds: number, zone: string): number {
  const local = day * DAY_MS + seconds * 1000
  const before = offsetMs(local - DAY_MS, zone)
  const after = offsetMs(local + DAY_MS, zone)
  const early = local - before
  if (before === after) return early
  const late = local - after
  const valid = (t: number) => t + offsetMs(t, zone) === local
  if (valid(early) && valid(late)) return Math.min(early, late)
  if (valid(late)) return late
  // Valid, or in the gap of a spring-forward jump: `early` is the time moved on by the jump.
  return early
}

/** The on-intervals [from, to) of the windows that start on local day `day`. */
function intervalsOfDay(spec: ScheduleSpec, exceptions: Map<number, TimeWindow[]>, day: number, zone: string): [number, number][] {
  const weekday = DAYS[new Date(day * DAY_MS).getUTCDay()]!
  const windows = exceptions.get(day) ?? spec.windows.filter((w) => w.day === weekday)
  return windows.map((w) => {
    const start = secondsOfDay(w.start)
    let end = secondsOfDay(w.end)
    if (end <= start) end += 86_400
    const from = instantOf(day, start, zone)
    const to = instantOf(day + Math.floor(end / 86_400), end % 86_400, zone)
    // Emptied by a spring-forward jump: the window keeps its length from its start.
    return [from, to > from ? to : from + (end - start) * 1000]
  })
}

/** The schedule's merged on-intervals over local days [first, last]. */
function merged(spec: ScheduleSpec, exceptions: Map<number, TimeWindow[]>, first: number, last: number, zone: string): [number, number][] {
  const all: [number, number][] = []
  for (let day = first; day <= last; day++) all.push(...intervalsOfDay(spec, exceptions, day, zone))
  all.sort((a, b) => a[0] - b[0])
  const out: [number, number][] = []
  for (const [from, to] of all) {
    const lastOne = out[out.length - 1]
    if (lastOne && from <= lastOne[1]) lastOne[1] = Math.max(lastOne[1], to)
    else out.push([from, to])
  }
  return out
}

/** Whether the schedule is on at `at` (ms) in `zone`, and when that next changes. */
export function scheduleState(spec: ScheduleSpec, zone: string, at: number): ScheduleState {
  const exceptions = new Map(spec.exceptions.map((e) => [dayNumberOfDate(e.date), e.windows]))
  const p = zonedParts(at, zone)
  const today = dayNumber(p.year, p.month, p.day)
  // Windows that began up to two local days ago may still run (crossing midnight, DST).
  for (let horizon = 8; ; horizon = Math.min(MAX_HORIZON_DAYS, horizon * 4)) {
    const intervals = merged(spec, exceptions, today - 2, today + horizon, zone)
    // Boundaries within the last scanned day may belong to windows of days not scanned.
    const trusted = instantOf(today + horizon, 0, zone)
    const current = intervals.find(([from, to]) => from <= at && at < to)
    const next = current ? current[1] : intervals.find(([from]) => from > at)?.[0]
    if (next !== undefined && next < trusted) return { active: !!current, nextChange: next }
    if (horizon >= MAX_HORIZON_DAYS) return { active: !!current, nextChange: null }
  }
}
