import type { Clock } from '../../shared/handler.ts'

/** Fastest SCHEDULE_CLOCK_RATE: tasks gate on every frame, so a window must still span several frames. */
const MAX_RATE = 60

/**
 * The clock schedules are read on: the device's, or with SCHEDULE_CLOCK_START (tests) one that
 * starts at that instant when the device starts and then runs `rate` times faster than real
 * time, so that a window boundary or a daylight-saving night comes within seconds and a window
 * passes in a fraction of its length. Schedules only read this clock (they keep no timers), so a
 * faster clock moves every boundary closer by the same factor.
 */
export function scheduleClock(start: string, clock: Clock, rate = 1): () => number {
  if (!Number.isInteger(rate) || rate < 1 || rate > MAX_RATE) throw new Error(`SCHEDULE_CLOCK_RATE: not an integer from 1 to ${MAX_RATE}: ${rate}`)
  if (!start) {
    if (rate !== 1) throw new Error('SCHEDULE_CLOCK_RATE needs SCHEDULE_CLOCK_START: the device\'s own clock always runs at real speed')
    return () => clock.now()
  }
  const at = Date.parse(start)
  if (Number.isNaN(at)) throw new Error(`SCHEDULE_CLOCK_START: not an ISO 8601 instant: ${JSON.stringify(start)}`)
  const startedAt = clock.now()
  return () => at + (clock.now() - startedAt) * rate
}
