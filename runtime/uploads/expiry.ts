import type { Config } from '../../shared/config.ts'
import type { UploadSessionRow } from './repository.ts'
import type { SessionAges } from './session-times.ts'

export type ExpiryReason = 'idle' | 'absolute lifetime'

export interface Expiry {
  /** ms from now until the session counts as expired; 0 or less: expired. */
  inMs: number
  reason: ExpiryReason
}

/**
 * When a session expires, and why: the earlier of its idle deadline (only an open session
 * expires by idleness; each accepted chunk renews lastActivityAt, spec 3.1 / 8) and its
 * absolute deadline (open or complete; absoluteTimeoutMs 0 = none, spec 3.1). Null when
 * neither applies. The ages come from the monotonic clock (session-times.ts), so a wall-clock
 * step moves neither deadline.
 */
export function expiryOf(session: Pick<UploadSessionRow, 'state'>, ages: SessionAges,
  config: Pick<Config, 'uploadIdleTimeoutMs' | 'uploadAbsoluteTimeoutMs'>): Expiry | null {
  const { uploadIdleTimeoutMs: idle, uploadAbsoluteTimeoutMs: absolute } = config
  const idleLeft = session.state === 'open' && idle > 0 ? idle - ages.sinceActivity : Infinity
  const absoluteLeft = (session.state === 'open' || session.state === 'complete') && absolute > 0 ? absolute - ages.sinceCreated : Infinity
  if (idleLeft === Infinity && absoluteLeft === Infinity) return null
  return idleLeft <= absoluteLeft ? { inMs: idleLeft, reason: 'idle' } : { inMs: absoluteLeft, reason: 'absolute lifetime' }
}
