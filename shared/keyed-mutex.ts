/**
 * One step at a time per key; steps of different keys run concurrently. A key is forgotten
 * once nothing is queued behind its last step, so client-chosen keys (task ids) do not pile up.
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
}
