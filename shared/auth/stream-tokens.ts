import type { Identity } from '../handler.ts'

/** The query parameter a stream token travels in (docs/recording-and-live-view.md "Live view"). */
export const STREAM_TOKEN_PARAM = 'token'

/**
 * Short-lived tokens for media URLs (`auth: 'stream'` routes): a `<video>` or `<img>` element
 * cannot send an `mtk` header, so the URL carries a token that grants one route for one
 * resource id (`?id=`), on behalf of the account that asked for it.
 */
export interface StreamTokenService {
  /** A new token for `route` and `id` until `expiresAt` (ms); StreamTokenLimit when too many are outstanding. */
  grant(route: string, id: string, identity: Identity, expiresAt: number): string
  /** The identity a token grants for this route and id; null when unknown, expired, or for another route or id. */
  verify(token: string | undefined, route: string, id: string | undefined): Identity | null
  /** Moves a token's expiry (live view keep-alive). */
  extend(token: string, expiresAt: number): void
  revoke(token: string): void
}
