/** The first wait before restarting a device that exited unexpectedly. */
export const FIRST_RESTART_DELAY_MS = 1000
/** The longest wait: a device that keeps crashing is retried at most this far apart. */
export const MAX_RESTART_DELAY_MS = 30_000
/** A run at least this long was healthy: the crash after it starts the backoff afresh. */
export const HEALTHY_RUN_MS = 60_000

/**
 * The wait before the next start, after a run of `ranMs` that ended unexpectedly and the
 * previous wait `previousMs`: doubled while the device crashes soon after starting, back to
 * the first delay once it had run healthily (so a few crashes over months never leave every
 * later restart 30 s away).
 */
export function restartDelay(previousMs: number | null, ranMs: number): number {
  if (previousMs === null || ranMs >= HEALTHY_RUN_MS) return FIRST_RESTART_DELAY_MS
  return Math.min(previousMs * 2, MAX_RESTART_DELAY_MS)
}
