import { createHash, randomBytes } from 'node:crypto'

export type TakeResult = 'ok' | 'invalid' | 'expired'

/** Most tokens remembered (an expired one is told apart from a wrong one while it is remembered). */
const MAX_TOKENS = 32
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/**
 * Short-lived, single-use confirmation tokens (factory reset, two steps): a token is bound to
 * the session that asked for it, kept in memory only by its SHA-256, and taken at most once.
 * A restart forgets them all: the second step must follow the first on the same running device.
 */
export class ConfirmationTokens {
  readonly #tokens = new Map<string, { owner: string; expiresAt: number }>()

  issue(owner: string, now: number, ttlMs: number): { token: string; expiresAt: number } {
    const token = randomBytes(16).toString('hex')
    const expiresAt = now + ttlMs
    this.#tokens.set(sha256(token), { owner, expiresAt })
    while (this.#tokens.size > MAX_TOKENS) this.#tokens.delete(this.#tokens.keys().next().value!)
    return { token, expiresAt }
  }

  take(token: string, owner: string, now: number): TakeResult {
    const key = sha256(token)
    const entry = this.#tokens.get(key)
    if (!entry || entry.owner !== owner) return 'invalid'
    this.#tokens.delete(key)
    return now < entry.expiresAt ? 'ok' : 'expired'
  }
}
