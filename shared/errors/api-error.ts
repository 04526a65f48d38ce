import type { RecommendedAction } from './actions.ts'
import { catalogue, type ErrorId } from './catalogue.ts'

/** One element of `resMsg` (spec 2.7). */
export interface MessageItem {
  msgCode: string
  msgText: string
  messageKey: string
  details: Record<string, unknown>
  retryable: boolean
  retryAfterSeconds?: number
  recommendedAction: RecommendedAction
}

export interface ApiErrorOptions {
  details?: Record<string, unknown>
  /** A more precise display text than the catalogue's; never relied on by clients. */
  msgText?: string
  recommendedAction?: RecommendedAction
  retryable?: boolean
  retryAfterSeconds?: number
  httpStatus?: number
  cause?: unknown
}

/**
 * A failure from the catalogue. Handlers throw it; the runtime turns it into
 * `resCode: 0` with one message item and the catalogue's HTTP status.
 */
export class ApiError extends Error {
  readonly id: ErrorId
  readonly item: MessageItem
  readonly httpStatus: number

  constructor(id: ErrorId, options: ApiErrorOptions = {}) {
    const base = catalogue[id]
    const msgText = options.msgText ?? base.msgText
    super(msgText, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'ApiError'
    this.id = id
    this.httpStatus = options.httpStatus ?? base.httpStatus
    const retryAfterSeconds = options.retryAfterSeconds ?? ('retryAfterSeconds' in base ? base.retryAfterSeconds : undefined)
    this.item = {
      msgCode: base.msgCode,
      msgText,
      messageKey: base.messageKey,
      details: options.details ?? {},
      retryable: options.retryable ?? base.retryable,
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
      recommendedAction: options.recommendedAction ?? base.recommendedAction,
    }
  }
}

export const isApiError = (error: unknown): error is ApiError =>
  error instanceof ApiError ||
  // A handler bundle carries its own copy of this class, so `instanceof` fails across bundles.
  (typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'ApiError' &&
    typeof (error as { item?: unknown }).item === 'object' && typeof (error as { httpStatus?: unknown }).httpStatus === 'number')

/** InvalidParam naming the offending field (JSON pointer or part name). */
export const invalidParam = (field: string, reason: string, extra: Record<string, unknown> = {}) =>
  new ApiError('InvalidParam', { details: { field, reason, ...extra }, msgText: `Invalid field ${field}: ${reason}` })
