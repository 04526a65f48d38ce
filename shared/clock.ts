import type { Clock } from './handler.ts'

/**
 * Clocks of things in flight (docs/system.md "Clocks"): timestamps shown to users and stored
 * rows are wall-clock (`clock.now()`); how long something in flight has lived, and when it
 * expires or times out, run on the monotonic clock, which a wall-clock step (a device without a
 * battery-backed clock set by NTP after boot) does not move.
 */

/** The process's monotonic clock, ms (`performance.now()`): deadlines that stay in this process. */
export const monotonicNow = (): number => performance.now()

/** The monotonic reading of `clock`: its own when it has one (a test's), else the process's. */
export function monotonicOf(clock: Clock): () => number {
  return clock.monotonic ? () => clock.monotonic!() : monotonicNow
}

/**
 * The monotonic deadline of a wall-clock instant given out (an `expiresAt` shown to users): as
 * far from now on the monotonic clock as `wallAt` is from `clock.now()` at this moment. A later
 * wall-clock step moves the instant shown, not the deadline.
 */
export function monotonicDeadline(clock: Clock, wallAt: number): number {
  return monotonicOf(clock)() + (wallAt - clock.now())
}
