import { invalidParam } from '../../shared/errors/index.ts'
import { SCHEDULE_LIMITS } from '../../shared/schedules/types.ts'
import { isCalendarDate, secondsOfDay, type DateException, type TimeWindow, type WeeklyWindow } from '../../shared/schedules/windows.ts'

/** What the schema cannot say about a schedule: real dates, windows of some length, a bounded day. */
export function checkSchedule(windows: readonly WeeklyWindow[], exceptions: readonly DateException[]): void {
  const checkWindow = (field: string, w: TimeWindow) => {
    if (secondsOfDay(w.start) === secondsOfDay(w.end)) throw invalidParam(`${field}/end`, 'must differ from start (00:00 to 24:00 is the whole day)')
  }
  windows.forEach((w, i) => checkWindow(`/windows/${i}`, w))
  const perDay = new Map<string, number>()
  for (const w of windows) perDay.set(w.day, (perDay.get(w.day) ?? 0) + 1)
  for (const [day, n] of perDay)
    if (n > SCHEDULE_LIMITS.windowsPerDay) throw invalidParam('/windows', `${day} has ${n} windows; at most ${SCHEDULE_LIMITS.windowsPerDay} a day`)
  const dates = new Set<string>()
  exceptions.forEach((e, i) => {
    if (!isCalendarDate(e.date)) throw invalidParam(`/exceptions/${i}/date`, 'must be a calendar date YYYY-MM-DD')
    if (dates.has(e.date)) throw invalidParam(`/exceptions/${i}/date`, 'is listed twice')
    dates.add(e.date)
    e.windows.forEach((w, j) => checkWindow(`/exceptions/${i}/windows/${j}`, w))
  })
}
