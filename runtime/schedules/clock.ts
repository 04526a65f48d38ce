import type { Clock } from '../../shared/handler.ts'

/**
 * The clock schedules are read on: the device's, or with SCHEDULE_CLOCK_START (tests) one that
 * starts at that instant when the device starts and then runs at real speed, so that a window
 * boundary or a daylight-saving night comes within seconds.
 */
export function scheduleClock(start: string, clock: Clock): () => number {
  if (!start) return () => clock.now()
  const at = Date.parse(start)
  if (Number.isNaN(at)) throw new Error(`SCHEDULE_CLOCK_START: not an ISO 8601 instant: ${JSON.stringify(start)}`)
  const offset = at - clock.now()
  return () => clock.now() + offset
}
