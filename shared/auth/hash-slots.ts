import { availableParallelism } from 'node:os'
import { ApiError } from '../errors/index.ts'

/** The retryable refusal of a sign-in or password change the device cannot take on now (spec 2.7). */
export const loginBusy = () => new ApiError('LoginBusy', { retryAfterSeconds: 1, details: { retryAfterSeconds: 1 } })

/**
 * Admission of password hashes: each takes a core and about 128·N·r bytes (16 MiB at the
 * default cost, 128 MiB for a hash still of N=2^17), so a burst of sign-ins must not run them
 * all at once. At most `slots` run; up to `queue` more wait in arrival order; beyond that the
 * request is refused retryably (LoginBusy, spec 2.7) before it costs anything.
 */
export class HashSlots {
  #running = 0
  readonly #waiting: (() => void)[] = []

  constructor(readonly slots: number, readonly queue: number) {}

  async run<T>(step: () => Promise<T>): Promise<T> {
    if (this.#running < this.slots) this.#running++
    else if (this.#waiting.length < this.queue) await new Promise<void>((resolve) => this.#waiting.push(resolve))
    else throw loginBusy()
    try {
      return await step()
    } finally {
      // The slot passes straight to the next waiter, if any.
      const next = this.#waiting.shift()
      if (next) next()
      else this.#running--
    }
  }
}

const SLOTS = Symbol.for('edge-ai-device.auth.password-hash-slots')

/**
 * The process's admission: one hash per core at a time, eight more per core waiting (a wait of
 * a few seconds at most). It lives on globalThis because every handler bundle inlines shared/,
 * and the bound must hold for all of them together.
 */
export function passwordHashSlots(): HashSlots {
  const holder = globalThis as { [SLOTS]?: HashSlots }
  return (holder[SLOTS] ??= new HashSlots(availableParallelism(), 8 * availableParallelism()))
}
