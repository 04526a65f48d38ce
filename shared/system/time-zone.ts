/**
 * IANA time zones through the runtime's own ICU data (Intl), so the device and a browser agree
 * on them, and the local wall-clock time of an instant in a zone (for schedules).
 */

/** IANA names: `Area/Location` (also `Etc/GMT+5`, `America/Argentina/Buenos_Aires`) or `UTC`; no raw offsets. */
const IANA_NAME = /^(?:UTC|[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+){1,2})$/

/** Whether `name` is an IANA time zone the runtime knows (canonical names and their links). */
export function isIanaTimeZone(name: string): boolean {
  if (!IANA_NAME.test(name)) return false
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name })
    return true
  } catch {
    return false
  }
}

export interface ZonedParts {
  year: number
  month: number
  day: number
  hour: number
  minute: number
  second: number
  /** 0 = Sunday … 6 = Saturday. */
  weekday: number
}

const formatters = new Map<string, Intl.DateTimeFormat>()
const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat']

/** The wall-clock time of `ms` in `timeZone`. */
export function zonedParts(ms: number, timeZone: string): ZonedParts {
  let format = formatters.get(timeZone)
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric', weekday: 'short' })
    formatters.set(timeZone, format)
  }
  const p = Object.fromEntries(format.formatToParts(ms).map((part) => [part.type, part.value]))
  return { year: Number(p.year), month: Number(p.month), day: Number(p.day), hour: Number(p.hour), minute: Number(p.minute), second: Number(p.second), weekday: WEEKDAYS.indexOf(p.weekday!) }
}

/** Offset of `timeZone` from UTC at `ms`, in minutes (east positive). */
export function utcOffsetMinutes(ms: number, timeZone: string): number {
  const p = zonedParts(ms, timeZone)
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second)
  return Math.round((asUtc - Math.floor(ms / 1000) * 1000) / 60_000)
}

/** `ms` as local ISO 8601 time in `timeZone`, with its offset (`2026-03-29T03:30:00.000+02:00`). */
export function localIso(ms: number, timeZone: string): string {
  const offset = utcOffsetMinutes(ms, timeZone)
  const local = new Date(ms + offset * 60_000).toISOString().slice(0, -1)
  const sign = offset < 0 ? '-' : '+'
  const abs = Math.abs(offset)
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`
}
