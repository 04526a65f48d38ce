import { createHash, randomBytes } from 'node:crypto'
import { ApiError } from '../../shared/errors/index.ts'
import type { StreamTokenService } from '../../shared/auth/stream-tokens.ts'
import type { Clock, Identity } from '../../shared/handler.ts'
import { monotonicDeadline, monotonicOf } from '../../shared/clock.ts'

interface Grant {
  route: string
  id: string
  identity: Identity
  /** When it expires on the monotonic clock (shared/clock.ts): a wall-clock step moves only the expiresAt shown. */
  deadline: number
}

/** Tokens are kept by their digest: the token itself exists only in the URL handed out. */
const digest = (token: string) => createHash('sha256').update(token).digest('base64url')

/**
 * `ctx.streamTokens` (shared/auth/stream-tokens.ts): 256-bit random tokens held in memory (a
 * restart ends them, as it ends the live sessions they belong to), at most `maxGrants` at a time.
 * A token lives as long as its `expiresAt` was ahead of the wall clock when granted or extended,
 * counted on the monotonic clock (docs/system.md "Clocks").
 */
export class StreamTokens implements StreamTokenService {
  private readonly grants = new Map<string, Grant>()
  private readonly monotonic: () => number

  constructor(private readonly clock: Clock, private readonly maxGrants = 4096) {
    this.monotonic = monotonicOf(clock)
  }

  grant(route: string, id: string, identity: Identity, expiresAt: number): string {
    if (this.grants.size >= this.maxGrants) this.sweep()
    if (this.grants.size >= this.maxGrants) throw new ApiError('StreamTokenLimit', { details: { limit: this.maxGrants } })
    const token = randomBytes(32).toString('base64url')
    this.grants.set(digest(token), { route, id, identity: { ...identity, sessionId: null }, deadline: monotonicDeadline(this.clock, expiresAt) })
    return token
  }

  verify(token: string | undefined, route: string, id: string | undefined): Identity | null {
    if (!token || token.length > 64) return null
    const key = digest(token)
    const grant = this.grants.get(key)
    if (!grant) return null
    if (grant.deadline <= this.monotonic()) {
      this.grants.delete(key)
      return null
    }
    return grant.route === route && grant.id === id ? grant.identity : null
  }

  extend(token: string, expiresAt: number): void {
    const grant = this.grants.get(digest(token))
    if (grant) grant.deadline = monotonicDeadline(this.clock, expiresAt)
  }

  revoke(token: string): void {
    this.grants.delete(digest(token))
  }

  private sweep(): void {
    const now = this.monotonic()
    for (const [key, grant] of this.grants) if (grant.deadline <= now) this.grants.delete(key)
  }
}
