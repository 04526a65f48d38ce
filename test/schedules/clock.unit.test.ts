import { describe, expect, it } from 'vitest'
import { scheduleClock } from '../../runtime/schedules/clock.ts'

/** A device clock the test moves by hand. */
const manual = (start: number) => {
  let now = start
  return { clock: { now: () => now }, advance: (ms: number) => { now += ms } }
}

describe('the schedules\' clock (SCHEDULE_CLOCK_START, SCHEDULE_CLOCK_RATE)', () => {
  it('is the device\'s clock when no start is set', () => {
    const { clock, advance } = manual(1_000_000)
    const now = scheduleClock('', clock)
    advance(5_000)
    expect(now()).toBe(1_005_000)
  })

  it('starts at the given instant and runs at real speed by default', () => {
    const { clock, advance } = manual(1_000_000)
    const now = scheduleClock('2026-03-29T00:58:30Z', clock)
    expect(now()).toBe(Date.parse('2026-03-29T00:58:30Z'))
    advance(1_500)
    expect(now()).toBe(Date.parse('2026-03-29T00:58:31.500Z'))
  })

  it('runs `rate` times faster than the device\'s clock from that instant', () => {
    const { clock, advance } = manual(1_000_000)
    const now = scheduleClock('2026-03-29T00:58:30Z', clock, 4)
    advance(22_500)
    expect(now()).toBe(Date.parse('2026-03-29T01:00:00Z'))
  })

  it('refuses a rate out of 1–60, a fraction, a rate without a start, and a start that is not an instant', () => {
    const { clock } = manual(0)
    expect(() => scheduleClock('2026-03-29T00:58:30Z', clock, 0)).toThrow(/SCHEDULE_CLOCK_RATE: not an integer from 1 to 60: 0/)
    expect(() => scheduleClock('2026-03-29T00:58:30Z', clock, 61)).toThrow(/SCHEDULE_CLOCK_RATE/)
    expect(() => scheduleClock('2026-03-29T00:58:30Z', clock, 1.5)).toThrow(/SCHEDULE_CLOCK_RATE/)
    expect(() => scheduleClock('', clock, 4)).toThrow(/SCHEDULE_CLOCK_RATE needs SCHEDULE_CLOCK_START/)
    expect(() => scheduleClock('yesterday', clock)).toThrow(/SCHEDULE_CLOCK_START: not an ISO 8601 instant/)
  })
})
