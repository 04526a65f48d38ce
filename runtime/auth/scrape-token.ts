import { createHash, timingSafeEqual } from 'node:crypto'

const digest = (text: string) => createHash('sha256').update(text).digest()

/**
 * Whether `Authorization: Bearer <token>` carries the configured scrape token (`METRICS_TOKEN`;
 * empty = no token accepted). Compared as SHA-256 digests in constant time, so neither the
 * token's characters nor its length show in the timing.
 */
export function scrapeTokenAccepted(configured: string, authorization: string | undefined): boolean {
  if (!configured || !authorization) return false
  const match = /^Bearer +(\S+) *$/i.exec(authorization)
  return match !== null && timingSafeEqual(digest(match[1]!), digest(configured))
}
