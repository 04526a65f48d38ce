/**
 * The one one-at-a-time primitive of the device (docs/architecture.md "State machines and
 * locks"). Steps of one key run in the order they were queued (FIFO), each after the previous
 * one settled, whether it succeeded or failed; a step's result or error goes to its own caller
 * only (a failed step never fails the ones queued behind it). Steps of different keys run
 * concurrently. A key is forgotten once nothing is queued behind its last step, so
 * client-chosen keys (task ids) do not pile up.
 */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<unknown>>()

  run<T>(key: string, step: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve()
    const result = previous.then(step, step)
    const tail = result.catch(() => undefined)
    this.#tails.set(key, tail)
    void tail.then(() => { if (this.#tails.get(key) === tail) this.#tails.delete(key) })
    return result
  }

  /** Whether a step of `key` is running or queued. */
  busy(key: string): boolean {
    return this.#tails.has(key)
  }
}

/** A KeyedMutex of a single key: everything it runs, one at a time, in order. */
export class Mutex {
  readonly #keyed = new KeyedMutex()

  run<T>(step: () => Promise<T>): Promise<T> {
    return this.#keyed.run('', step)
  }

  /** Whether a step is running or queued. */
  get busy(): boolean {
    return this.#keyed.busy('')
  }
}
