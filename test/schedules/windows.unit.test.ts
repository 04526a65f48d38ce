import { describe, expect, it } from 'vitest'
import { instantOf, scheduleState, type ScheduleSpec, type WeeklyWindow } from '../../shared/schedules/windows.ts'

const Z = (iso: string) => Date.parse(iso)
const BERLIN = 'Europe/Berlin'
const NEW_YORK = 'America/New_York'

/** Every switch of the schedule from `from` to `to`, found by following nextChange: [instant (ISO), on]. */
function timeline(spec: ScheduleSpec, zone: string, from: string, to: string): [string, boolean][] {
  const out: [string, boolean][] = []
  let at = Z(from)
  for (let state = scheduleState(spec, zone, at); state.nextChange !== null && state.nextChange < Z(to);) {
    at = state.nextChange
    state = scheduleState(spec, zone, at)
    out.push([new Date(at).toISOString(), state.active])
  }
  return out
}
const weekly = (...windows: WeeklyWindow[]): ScheduleSpec => ({ windows, exceptions: [] })

describe('weekly schedules in a time zone (spec 4.10 Schedule)', () => {
  it('a weekday window in local time: on and off at its boundaries, nothing in between', () => {
    // 2026-03-02 is a Monday; Berlin is UTC+1 in winter.
    const spec = weekly({ day: 'mon', start: '09:00', end: '17:00' })
    expect(scheduleState(spec, BERLIN, Z('2026-03-02T07:59:59Z'))).toEqual({ active: false, nextChange: Z('2026-03-02T08:00:00Z') })
    expect(scheduleState(spec, BERLIN, Z('2026-03-02T08:00:00Z'))).toEqual({ active: true, nextChange: Z('2026-03-02T16:00:00Z') })
    expect(scheduleState(spec, BERLIN, Z('2026-03-02T16:00:00Z'))).toEqual({ active: false, nextChange: Z('2026-03-09T08:00:00Z') })
    expect(scheduleState(spec, 'UTC', Z('2026-03-02T08:00:00Z'))).toEqual({ active: false, nextChange: Z('2026-03-02T09:00:00Z') })
  })

  it('several windows a day, overlapping ones merged, and a window crossing midnight', () => {
    const spec = weekly(
      { day: 'fri', start: '08:00', end: '10:00' }, { day: 'fri', start: '09:30', end: '11:00:30' },
      { day: 'fri', start: '22:00', end: '06:00' },
    )
    expect(timeline(spec, 'UTC', '2026-03-06T00:00:00Z', '2026-03-08T00:00:00Z')).toEqual([
      ['2026-03-06T08:00:00.000Z', true], ['2026-03-06T11:00:30.000Z', false],
      ['2026-03-06T22:00:00.000Z', true], ['2026-03-07T06:00:00.000Z', false],
    ])
    // Saturday 05:00 is still Friday night's window.
    expect(scheduleState(spec, 'UTC', Z('2026-03-07T05:00:00Z')).active).toBe(true)
    // A window to 24:00 ends at midnight; with the next day's from 00:00 it is one span.
    const allWeekend = weekly({ day: 'sat', start: '00:00', end: '24:00' }, { day: 'sun', start: '00:00', end: '24:00' })
    expect(scheduleState(allWeekend, 'UTC', Z('2026-03-07T12:00:00Z'))).toEqual({ active: true, nextChange: Z('2026-03-09T00:00:00Z') })
  })

  it('a date exception replaces the weekly windows of that day: a holiday is off, another day has its own hours', () => {
    const spec: ScheduleSpec = {
      windows: [{ day: 'mon', start: '09:00', end: '17:00' }, { day: 'sun', start: '23:00', end: '01:00' }],
      exceptions: [{ date: '2026-04-06', windows: [] }, { date: '2026-04-13', windows: [{ start: '12:00', end: '13:00' }] }],
    }
    expect(timeline(spec, 'UTC', '2026-04-05T12:00:00Z', '2026-04-14T00:00:00Z')).toEqual([
      // Sunday night's window runs into the holiday: a window belongs to the day it starts on.
      ['2026-04-05T23:00:00.000Z', true], ['2026-04-06T01:00:00.000Z', false],
      ['2026-04-12T23:00:00.000Z', true], ['2026-04-13T01:00:00.000Z', false],
      ['2026-04-13T12:00:00.000Z', true], ['2026-04-13T13:00:00.000Z', false],
    ])
  })

  it('spring forward (Berlin, 2026-03-29, 02:00 → 03:00): a window in the skipped hour runs once, at its length', () => {
    // 01:00Z is both 02:00 winter time and 03:00 summer time.
    expect(instantOf(Math.floor(Z('2026-03-29T00:00:00Z') / 86_400_000), 2.5 * 3600, BERLIN)).toBe(Z('2026-03-29T01:30:00Z'))
    expect(timeline(weekly({ day: 'sun', start: '02:00', end: '02:30' }), BERLIN, '2026-03-28T00:00:00Z', '2026-03-30T00:00:00Z'))
      .toEqual([['2026-03-29T01:00:00.000Z', true], ['2026-03-29T01:30:00.000Z', false]])
    // Ending where the jump ends, it would be empty: it keeps its hour.
    expect(timeline(weekly({ day: 'sun', start: '02:00', end: '03:00' }), BERLIN, '2026-03-28T00:00:00Z', '2026-03-30T00:00:00Z'))
      .toEqual([['2026-03-29T01:00:00.000Z', true], ['2026-03-29T02:00:00.000Z', false]])
    // Across the jump: 01:30 winter time to 03:30 summer time is one real hour.
    expect(timeline(weekly({ day: 'sun', start: '01:30', end: '03:30' }), BERLIN, '2026-03-28T00:00:00Z', '2026-03-30T00:00:00Z'))
      .toEqual([['2026-03-29T00:30:00.000Z', true], ['2026-03-29T01:30:00.000Z', false]])
  })

  it('fall back (Berlin, 2026-10-25, 03:00 → 02:00): a window in the repeated hour runs once, not twice', () => {
    expect(timeline(weekly({ day: 'sun', start: '02:15', end: '02:45' }), BERLIN, '2026-10-24T00:00:00Z', '2026-10-26T00:00:00Z'))
      .toEqual([['2026-10-25T00:15:00.000Z', true], ['2026-10-25T00:45:00.000Z', false]])
    // Across the repeated hour: 01:00 summer time to 04:00 winter time, four real hours, one span.
    expect(timeline(weekly({ day: 'sun', start: '01:00', end: '04:00' }), BERLIN, '2026-10-24T00:00:00Z', '2026-10-26T00:00:00Z'))
      .toEqual([['2026-10-24T23:00:00.000Z', true], ['2026-10-25T03:00:00.000Z', false]])
  })

  it('a daily window keeps its local hours through both transitions (New York 2026), one span a day', () => {
    const daily = weekly(...(['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const).map((day) => ({ day, start: '01:30', end: '02:30' })))
    const spring = timeline(daily, NEW_YORK, '2026-03-07T00:00:00Z', '2026-03-10T00:00:00Z')
    expect(spring).toEqual([
      ['2026-03-07T06:30:00.000Z', true], ['2026-03-07T07:30:00.000Z', false],
      // 01:30 EST, then 02:30 does not exist: 03:30 EDT, one real hour.
      ['2026-03-08T06:30:00.000Z', true], ['2026-03-08T07:30:00.000Z', false],
      ['2026-03-09T05:30:00.000Z', true], ['2026-03-09T06:30:00.000Z', false],
    ])
    const fall = timeline(daily, NEW_YORK, '2026-10-31T00:00:00Z', '2026-11-03T00:00:00Z')
    expect(fall).toEqual([
      ['2026-10-31T05:30:00.000Z', true], ['2026-10-31T06:30:00.000Z', false],
      // 01:30 happens twice (EDT, then EST): the first; 02:30 EST comes after the repeat.
      ['2026-11-01T05:30:00.000Z', true], ['2026-11-01T07:30:00.000Z', false],
      ['2026-11-02T06:30:00.000Z', true], ['2026-11-02T07:30:00.000Z', false],
    ])
  })

  it('an empty schedule is never on; a schedule on all week never changes', () => {
    expect(scheduleState(weekly(), BERLIN, Z('2026-06-01T00:00:00Z'))).toEqual({ active: false, nextChange: null })
    const always = weekly(...(['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const).map((day) => ({ day, start: '00:00', end: '24:00' })))
    expect(scheduleState(always, BERLIN, Z('2026-03-29T01:30:00Z'))).toEqual({ active: true, nextChange: null })
    // Only an exception far ahead: found within the horizon.
    const once: ScheduleSpec = { windows: [], exceptions: [{ date: '2026-12-24', windows: [{ start: '18:00', end: '20:00' }] }] }
    expect(scheduleState(once, BERLIN, Z('2026-06-01T00:00:00Z'))).toEqual({ active: false, nextChange: Z('2026-12-24T17:00:00Z') })
  })
})
