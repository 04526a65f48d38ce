import { RecommendedAction } from './actions.ts'
import { ApiError } from './api-error.ts'

/**
 * Error codes of causes that pass by themselves (resources briefly exhausted, a busy database,
 * a peer that went away): only these make an unexpected failure worth retrying. Anything else
 * is presumed deterministic (a bug or a bad input the schemas missed), and a client that
 * retried it would only fail again.
 */
const TRANSIENT_CODES = new Set([
  'EAGAIN', 'EBUSY', 'EMFILE', 'ENFILE', 'ENOMEM', 'ETIMEDOUT', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE',
  'SQLITE_BUSY', 'SQLITE_LOCKED',
])

/** Error codes of a full disk or quota: the write failed, the request was sound. */
const STORAGE_FULL_CODES = new Set(['SQLITE_FULL', 'ENOSPC', 'EDQUOT'])

/** Whether `error` or one of its causes (drizzle and libsql wrap them) has a code of `codes`. */
function causedBy(error: unknown, codes: Set<string>): boolean {
  for (let cause = error, depth = 0; cause && depth < 8; cause = (cause as { cause?: unknown }).cause, depth++) {
    const code = (cause as { code?: unknown }).code
    if (typeof code === 'string' && codes.has(code)) return true
  }
  return false
}

/**
 * The answer to an unexpected failure: StorageFull when a write found the disk full, else the
 * generic Internal error, retryable only when its cause is known to be transient.
 */
export function internalError(cause: unknown, details: Record<string, unknown>): ApiError {
  if (causedBy(cause, STORAGE_FULL_CODES)) return new ApiError('StorageFull', { details })
  return causedBy(cause, TRANSIENT_CODES)
    ? new ApiError('Internal', { details, retryable: true, recommendedAction: RecommendedAction.RETRY_LATER })
    : new ApiError('Internal', { details })
}
