/** One step at a time per handle (task id); steps of different handles run concurrently. */
export class HandleLocks {
  readonly #tails = new Map<string, Promise<unknown>>()

  run<T>(handle: string, step: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(handle) ?? Promise.resolve()
    const result = previous.then(step, step)
    const tail = result.catch(() => undefined)
    this.#tails.set(handle, tail)
    // Forget the handle once nothing is queued behind this step.
    void tail.then(() => { if (this.#tails.get(handle) === tail) this.#tails.delete(handle) })
    return result
  }
}
