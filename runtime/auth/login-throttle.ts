import { isIPv6 } from 'node:net'
import { and, eq, lt } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { loginThrottle } from '../../shared/db/schema/index.ts'
import type { Clock, Logger } from '../../shared/handler.ts'
import type { EventsService } from '../../shared/events/types.ts'
import type { LoginThrottle } from '../../shared/auth/login-throttle.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { KeyedMutex } from '../keyed-mutex.ts'
import { loginBusy } from '../../shared/auth/hash-slots.ts'
import { monotonicOf } from '../../shared/clock.ts'

export interface ThrottlePolicy {
  /** Failed checks of one account from one client before that client is blocked for it (0 = never). */
  maxFailures: number
  /** The first block; each further failure from the client doubles it, up to `maxBlockMs`. */
  blockMs: number
  maxBlockMs: number
  /** Most that failures from all clients together may delay a check of the account. */
  accountDelayMaxMs: number
}

/** A client's count is forgotten a day after its last failure. */
const FORGET_MS = 24 * 60 * 60 * 1000
/** Account-wide: this many recent failures from all clients together cost nothing... */
const ACCOUNT_FREE_FAILURES = 20
/** ...one of them is forgotten per minute... */
const ACCOUNT_LEAK_MS = 60_000
/** ...and each one above the free ones spaces the checks of the account this much more apart. */
const ACCOUNT_DELAY_STEP_MS = 250
/**
 * Checks of one account waiting for their turn; more are refused (LoginBusy). A blocked client
 * is refused before it queues, and in its turn in a moment, so a burst from one address drains fast.
 */
export const MAX_WAITING_PER_ACCOUNT = 64
/** A check that would wait longer than this for its turn (by the recent checks' length) is refused at once (LoginBusy). */
export const MAX_TURN_WAIT_MS = 2000
/** Clients and accounts kept in memory, least recently used dropped first (clients are read again from the database). */
const MAX_TRACKED = 10_000

interface ClientState {
  failures: number
  /** Monotonic time; null when not blocked. */
  blockedUntil: number | null
  /** Monotonic time of the last failure. */
  lastFailure: number
}

interface AccountLoad {
  /** Recent failures from all clients, leaking one per ACCOUNT_LEAK_MS. */
  level: number
  at: number
  /** Monotonic time the last check of the account ended; null before the first. */
  lastCheckEnd: number | null
  /** Recent length of a check (verify and record), ms: a moving average. */
  checkMs: number
}

/**
 * The key a client is counted under: its address, an IPv4-mapped IPv6 address as IPv4, and an
 * IPv6 address by its /64 (a single host usually holds a whole /64); `-` when unknown.
 */
export function clientKey(address: string | null): string {
  if (!address) return '-'
  const plain = address.replace(/%.*$/, '')
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(plain)
  if (mapped) return mapped[1]!
  if (!isIPv6(plain)) return plain
  const [head, tail] = plain.split('::')
  const groups = head ? head.split(':') : []
  if (tail !== undefined) {
    const back = tail ? tail.split(':') : []
    groups.push(...Array<string>(Math.max(0, 8 - groups.length - back.length)).fill('0'), ...back)
  }
  return `${groups.slice(0, 4).map((group) => parseInt(group, 16).toString(16)).join(':')}::/64`
}

const sum = (values: Iterable<number>) => {
  let total = 0
  for (const value of values) total += value
  return total
}

/** LoginBusy (retryable) with the wait in whole seconds, at least 1, in the item and its details. */
function busy(waitMs: number): ApiError {
  const retryAfterSeconds = Math.max(1, Math.ceil(waitMs / 1000))
  return retryAfterSeconds === 1 ? loginBusy() : new ApiError('LoginBusy', { retryAfterSeconds, details: { retryAfterSeconds } })
}

/** Keeps `value` as the most recently used entry of a bounded map. */
function remember<V>(map: Map<string, V>, key: string, value: V): V {
  map.delete(key)
  map.set(key, value)
  if (map.size > MAX_TRACKED) map.delete(map.keys().next().value!)
  return value
}

/**
 * `ctx.loginThrottle` (shared/auth/login-throttle.ts); the policy is docs/sign-in-and-errors.md "Sign-in and sessions".
 *
 * - Per account and client: `maxFailures` failed checks, then the client is blocked for that
 *   account for `blockMs`, and after each further failure for twice as long as before, up to
 *   `maxBlockMs`. Other clients are not blocked, so nobody can lock the account out.
 * - Per account, all clients together: beyond ACCOUNT_FREE_FAILURES recent failures the checks
 *   of the account are spaced apart (at most `accountDelayMaxMs`), which slows a guess spread over
 *   many addresses. A check that comes too early is not held: it is refused at once, LoginBusy with
 *   retryAfterSeconds, so a flood holds no connection and an administrator gets an answer at once.
 * - Checks of one account run one at a time (check, verify, record as one step), so a burst
 *   cannot have more guesses verified than the count allows. A check whose wait for its turn
 *   would exceed MAX_TURN_WAIT_MS is refused at once the same way.
 * - Durations run on the monotonic clock, so a wall-clock step neither lengthens nor ends a block.
 *   Counts and blocks are also stored (login_throttle) and survive a restart; what is left of a
 *   stored block is read as at most its length, whatever the wall clock did meanwhile.
 */
export class RuntimeLoginThrottle implements LoginThrottle {
  readonly #clients = new Map<string, ClientState>()
  readonly #accounts = new Map<string, AccountLoad>()
  readonly #turns = new KeyedMutex()
  /** Checks waiting for their turn, per account and client. */
  readonly #waiting = new Map<string, Map<string, number>>()
  readonly #monotonic: () => number

  constructor(private readonly deps: { db: Db; clock: Clock; events: EventsService; log: Logger; policy: ThrottlePolicy }) {
    this.#monotonic = monotonicOf(deps.clock)
  }

  async attempt<T>(account: string, clientAddress: string | null, check: () => Promise<T | null>): Promise<T | null> {
    const client = clientKey(clientAddress)
    // A blocked client is refused at once, without waiting for its turn.
    this.#refuseIfBlocked(await this.#client(account, client))
    this.#refuseIfEarly(account)
    const queue = this.#waiting.get(account) ?? new Map<string, number>()
    if (sum(queue.values()) >= MAX_WAITING_PER_ACCOUNT) throw busy(1000)
    // The wait for the turn, by the recent checks' length: a long one is refused rather than held.
    const expectedWaitMs = this.#verifiesAhead(account, queue) * this.#load(account).checkMs
    if (expectedWaitMs > MAX_TURN_WAIT_MS) throw busy(expectedWaitMs)
    queue.set(client, (queue.get(client) ?? 0) + 1)
    this.#waiting.set(account, queue)
    try {
      return await this.#turns.run(account, async () => {
        const state = await this.#client(account, client)
        this.#refuseIfBlocked(state) // a check that held the turn before may have blocked it
        this.#refuseIfEarly(account) // ... or spaced the account's checks further apart
        const started = this.#monotonic()
        try {
          const result = await check()
          if (result === null) await this.#fail(account, client, clientAddress, state)
          else if (state.failures > 0) await this.#clear(account, client)
          return result
        } finally {
          const load = this.#load(account)
          load.lastCheckEnd = this.#monotonic()
          load.checkMs = 0.7 * load.checkMs + 0.3 * (load.lastCheckEnd - started)
        }
      })
    } finally {
      const left = queue.get(client)! - 1
      if (left > 0) queue.set(client, left)
      else queue.delete(client)
      if (queue.size === 0 && this.#waiting.get(account) === queue) this.#waiting.delete(account)
    }
  }

  /**
   * Checks ahead that will run a verification: a client's checks beyond what its count still
   * allows are refused in their turn at once (LoginLocked) and cost nothing.
   */
  #verifiesAhead(account: string, queue: Map<string, number>): number {
    const { maxFailures } = this.deps.policy
    let ahead = 0
    for (const [client, count] of queue) {
      const state = this.#clients.get(JSON.stringify([account, client]))
      ahead += maxFailures > 0 && state ? Math.min(count, Math.max(1, maxFailures - state.failures)) : count
    }
    return ahead
  }

  async #client(account: string, client: string): Promise<ClientState> {
    const key = JSON.stringify([account, client])
    let state = this.#clients.get(key)
    if (!state) {
      const [row] = await this.deps.db.select().from(loginThrottle)
        .where(and(eq(loginThrottle.accountName, account), eq(loginThrottle.client, client))).limit(1)
      state = this.#clients.get(key) ?? this.#fromRow(row) // another read may have finished first
    }
    if (state.failures > 0 && this.#monotonic() - state.lastFailure > FORGET_MS) Object.assign(state, { failures: 0, blockedUntil: null })
    return remember(this.#clients, key, state)
  }

  #fromRow(row: typeof loginThrottle.$inferSelect | undefined): ClientState {
    const monotonic = this.#monotonic()
    if (!row) return { failures: 0, blockedUntil: null, lastFailure: monotonic - FORGET_MS - 1 }
    const wall = this.deps.clock.now()
    const age = Math.min(Math.max(0, wall - row.lastFailureAt), FORGET_MS + 1)
    // What is left of a stored block, never more than its length: the clock may have been stepped back.
    const left = row.blockedUntil === null ? 0 : Math.min(Math.max(0, row.blockedUntil - wall), row.blockMs ?? 0)
    return { failures: row.failures, blockedUntil: left > 0 ? monotonic + left : null, lastFailure: monotonic - age }
  }

  #refuseIfBlocked(state: ClientState) {
    const leftMs = state.blockedUntil === null ? 0 : state.blockedUntil - this.#monotonic()
    if (leftMs <= 0) return
    const retryAfterSeconds = Math.ceil(leftMs / 1000)
    throw new ApiError('LoginLocked', { retryAfterSeconds, details: { retryAfterSeconds } })
  }

  /**
   * Beyond the free failures, checks of the account are spaced `#accountDelay` apart: one that
   * comes before its time is refused at once (LoginBusy, with the time left), not held.
   */
  #refuseIfEarly(account: string) {
    const delayMs = this.#accountDelay(account)
    const { lastCheckEnd } = this.#load(account)
    if (delayMs === 0 || lastCheckEnd === null) return
    const leftMs = lastCheckEnd + delayMs - this.#monotonic()
    if (leftMs > 0) throw busy(leftMs)
  }

  /** The account's recent failures from all clients, leaked to now. */
  #load(account: string): AccountLoad {
    const now = this.#monotonic()
    const load = this.#accounts.get(account) ?? { level: 0, at: now, lastCheckEnd: null, checkMs: 0 }
    load.level = Math.max(0, load.level - (now - load.at) / ACCOUNT_LEAK_MS)
    load.at = now
    return remember(this.#accounts, account, load)
  }

  #accountDelay(account: string): number {
    const over = Math.floor(this.#load(account).level) - ACCOUNT_FREE_FAILURES
    return over > 0 ? Math.min(this.deps.policy.accountDelayMaxMs, over * ACCOUNT_DELAY_STEP_MS) : 0
  }

  async #fail(account: string, client: string, clientAddress: string | null, state: ClientState) {
    const { maxFailures, blockMs, maxBlockMs } = this.deps.policy
    const wall = this.deps.clock.now()
    const monotonic = this.#monotonic()
    this.#load(account).level += 1
    state.failures += 1
    state.lastFailure = monotonic
    const blocks = maxFailures > 0 && state.failures >= maxFailures
    const length = blocks ? Math.min(maxBlockMs, blockMs * 2 ** Math.min(state.failures - maxFailures, 30)) : 0
    state.blockedUntil = blocks ? monotonic + length : null
    const values = { failures: state.failures, blockedUntil: blocks ? wall + length : null, blockMs: blocks ? length : null, lastFailureAt: wall }
    // The count, the block and its event commit together (outbox, docs/events.md "Events").
    await this.deps.db.transaction(async (tx) => {
      await tx.insert(loginThrottle).values({ accountName: account, client, ...values })
        .onConflictDoUpdate({ target: [loginThrottle.accountName, loginThrottle.client], set: values })
      await tx.delete(loginThrottle).where(lt(loginThrottle.lastFailureAt, wall - FORGET_MS))
      if (blocks) await this.deps.events.emit('login.locked', { accountName: account, clientAddress, failures: state.failures, lockedUntil: wall + length }, { tx })
    })
    if (blocks) this.deps.log.warn({ event: 'login.locked', account, client, blockMs: length }, 'sign-ins of this account from this client blocked after repeated failures')
  }

  async #clear(account: string, client: string) {
    this.#clients.delete(JSON.stringify([account, client]))
    await this.deps.db.delete(loginThrottle).where(and(eq(loginThrottle.accountName, account), eq(loginThrottle.client, client)))
  }
}
