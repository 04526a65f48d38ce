import type { RecommendedAction as A } from './actions.ts'

/** One error of the catalogue (shared/errors/catalogue.ts: what each field means). */
export interface CatalogueEntry {
  msgCode: string
  messageKey: string
  msgText: string
  httpStatus: number
  retryable: boolean
  recommendedAction: A
  retryAfterSeconds?: number
}

export const entry = (
  msgCode: string,
  messageKey: string,
  msgText: string,
  recommendedAction: A,
  options: { httpStatus?: number; retryable?: boolean; retryAfterSeconds?: number } = {},
): CatalogueEntry => ({
  msgCode,
  messageKey,
  msgText,
  recommendedAction,
  httpStatus: options.httpStatus ?? 200,
  retryable: options.retryable ?? false,
  ...(options.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: options.retryAfterSeconds }),
})
