import { createHash, randomBytes } from 'node:crypto'
import type { Clock } from '../../shared/handler.ts'
import { monotonicOf } from '../../shared/clock.ts'

export type TakeResult = 'ok' | 'invalid' | 'expired'

/** Most tokens remembered (an expired one is told apart from a wrong one while it is remembered). */
const MAX_TOKENS = 32
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/**
 * Short-lived, single-use confirmation tokens (factory reset, two steps): a token is bound to
 * the session that asked for it, kept in memory only by its SHA-256, and taken at most once.
 * A restart forgets them all: the second step must follow the first on the same running device.
 * A token's age runs on the monotonic clock (docs/system.md "Clocks"): a wall-clock step neither
 * expires it early nor keeps it past its time; `expiresAt` is the wall-clock instant shown.
 */
export class ConfirmationTokens {
  readonly #tokens = new Map<string, { owner: string; deadline: number }>()
  readonly #monotonic: () => number

  constructor(private readonly clock: Clock) {
    this.#monotonic = monotonicOf(clock)
  }

  issue(owner: string, ttlMs: number): { token: string; expiresAt: number } {
    const token = randomBytes(16).toString('hex')
    this.#tokens.set(sha256(token), { owner, deadline: this.#monotonic() + ttlMs })
    while (this.#tokens.size > MAX_TOKENS) this.#tokens.delete(this.#tokens.keys().next().value!)
    return { token, expiresAt: this.clock.now() + ttlMs }
  }

  take(token: string, owner: string): TakeResult {
    const key = sha256(token)
    const entry = this.#tokens.get(key)
    if (!entry || entry.owner !== owner) return 'invalid'
    this.#tokens.delete(key)
    return this.#monotonic() < entry.deadline ? 'ok' : 'expired'
  }
}
