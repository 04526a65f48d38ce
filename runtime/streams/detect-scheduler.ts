/**
 * Turns at the detector for the stream tasks (docs/cameras-and-stream-tasks.md "Detector scheduling"): at most
 * `slots` detections run at once, and a task waiting for a turn gets one in the order it asked.
 * A task asks again only after its turn ended, so first come first served is round robin over
 * the tasks that have a frame for the detector: beyond the detector's capacity every channel
 * gets the same share of it. `slots` 0: no limit (each task's detection runs as soon as it asks,
 * the previous behaviour).
 *
 * Under more load than it can serve, concurrent inferences share the cores: each takes as long
 * as all of them together, for no more detections a second (bench/detector-concurrency.bench.ts,
 * bench/capacity-overload.bench.ts), and every task's frame is that old when its result comes.
 */
export class DetectScheduler {
  readonly #slots: number
  #running = 0
  readonly #waiting: { owner: string; grant(): void; abandon(): void }[] = []
  /** Turns granted per owner (task), for the status and the fairness tests. */
  readonly #granted = new Map<string, number>()

  constructor(slots: number) {
    if (!Number.isInteger(slots) || slots < 0) throw new RangeError(`slots must be an integer >= 0, got ${slots}`)
    this.#slots = slots
  }

  get slots(): number { return this.#slots }
  get running(): number { return this.#running }
  get waiting(): number { return this.#waiting.length }

  /**
   * Waits for a turn; resolves with the function that ends it (call it once the detection
   * ended, whatever its outcome). A waiter whose `signal` aborts leaves the line: rejects with
   * the signal's reason.
   */
  turn(owner: string, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error)
    if (this.#slots === 0 || this.#running < this.#slots) return Promise.resolve(this.#grant(owner))
    return new Promise((resolve, reject) => {
      const entry = {
        owner,
        grant: () => { signal?.removeEventListener('abort', onAbort); resolve(this.#grant(owner)) },
        abandon: () => reject(signal?.reason as Error),
      }
      const onAbort = () => {
        const at = this.#waiting.indexOf(entry)
        if (at >= 0) this.#waiting.splice(at, 1)
        entry.abandon()
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.#waiting.push(entry)
    })
  }

  /** Turns granted so far to `owner`. */
  granted(owner: string): number {
    return this.#granted.get(owner) ?? 0
  }

  /** Forgets an owner's count (its task was cancelled). */
  forget(owner: string): void {
    this.#granted.delete(owner)
  }

  #grant(owner: string): () => void {
    this.#running++
    this.#granted.set(owner, this.granted(owner) + 1)
    let ended = false
    return () => {
      if (ended) return
      ended = true
      this.#running--
      if (this.#slots === 0) return
      while (this.#running < this.#slots && this.#waiting.length > 0) this.#waiting.shift()!.grant()
    }
  }
}
