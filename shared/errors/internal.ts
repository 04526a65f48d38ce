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

/** Whether `error` or one of its causes (drizzle and libsql wrap them) is known to be transient. */
function isTransientFailure(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 8; cause = (cause as { cause?: unknown }).cause, depth++) {
    const code = (cause as { code?: unknown }).code
    if (typeof code === 'string' && TRANSIENT_CODES.has(code)) return true
  }
  return false
}

/** The generic answer to an unexpected failure: retryable only when its cause is known to be transient. */
export function internalError(cause: unknown, details: Record<string, unknown>): ApiError {
  return isTransientFailure(cause)
    ? new ApiError('Internal', { details, retryable: true, recommendedAction: RecommendedAction.RETRY_LATER })
    : new ApiError('Internal', { details })
}
