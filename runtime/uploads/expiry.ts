import type { Config } from '../../shared/config.ts'
import type { UploadSessionRow } from './repository.ts'

export type ExpiryReason = 'idle' | 'absolute lifetime'

export interface Expiry {
  /** Clock time (ms) from which the session counts as expired. */
  at: number
  reason: ExpiryReason
}

/**
 * When a session expires, and why: the earlier of its idle deadline (only an open session
 * expires by idleness; each accepted chunk renews lastActivityAt, spec 3.1 / 8) and its
 * absolute deadline (open or complete; absoluteTimeoutMs 0 = none, spec 3.1). Null when
 * neither applies.
 */
export function expiryOf(session: Pick<UploadSessionRow, 'state' | 'createdAt' | 'lastActivityAt'>,
  config: Pick<Config, 'uploadIdleTimeoutMs' | 'uploadAbsoluteTimeoutMs'>): Expiry | null {
  const { uploadIdleTimeoutMs: idle, uploadAbsoluteTimeoutMs: absolute } = config
  const idleDeadline = session.state === 'open' && idle > 0 ? session.lastActivityAt + idle : Infinity
  const absoluteDeadline = (session.state === 'open' || session.state === 'complete') && absolute > 0 ? session.createdAt + absolute : Infinity
  if (idleDeadline === Infinity && absoluteDeadline === Infinity) return null
  return idleDeadline <= absoluteDeadline ? { at: idleDeadline, reason: 'idle' } : { at: absoluteDeadline, reason: 'absolute lifetime' }
}
