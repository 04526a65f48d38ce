import os from 'node:os'
import { monotonicNow } from '../../../shared/clock.ts'

/**
 * Admission of memory-hungry work (image decodes now, camera frames later) against a byte
 * budget (spec 4.11: the image budget comes from current memory and media capability).
 * Work declares the bytes it will need before it allocates them; what does not fit waits in
 * a bounded FIFO queue and, past its wait, is refused retryably (spec 2.7 `retryAfterSeconds`).
 */

/**
 * Bytes one detection holds at its peak per image pixel: the decoded RGB image (3; the same
 * for grey, RGB and RGBA input, libvips decodes line by line; measured with sharp 0.35 on a
 * 62-megapixel PNG) and, with the overlay, the JPEG being encoded (1): the overlay is drawn
 * into the decoded pixels (pipeline/overlay.ts) and libvips encodes them where they are, so
 * only the encoded output grows (measured: 0.5 byte a pixel above the decoded image for a
 * 62-megapixel picture, 0.67 for noise, the worst case of quality 80). Pipeline inputs and
 * crops are small beside them.
 */
const DECODED_BYTES_PER_PIXEL = 3
const OVERLAY_BYTES_PER_PIXEL = 1

export const detectionBytes = (width: number, height: number, overlay: boolean) =>
  width * height * (DECODED_BYTES_PER_PIXEL + (overlay ? OVERLAY_BYTES_PER_PIXEL : 0))

export interface MemoryBudgetOptions {
  /** Most bytes admitted at once. */
  capacityBytes: number
  /** Most requests waiting; one more is refused at once. */
  maxWaiting: number
  /** Longest wait of one request (a request's own deadline may end it sooner). */
  maxWaitMs: number
  /**
   * Memory the machine can still give now (default: `process.availableMemory()`, which
   * follows cgroup limits): an admission must also fit in it besides what is admitted
   * already (counted again once allocated: conservative).
   */
  available?: () => number
  /**
   * Called after releases with the bytes released since the last call, before waiting work is
   * admitted: the sidecar collects garbage there, so that released images leave the RSS.
   */
  reclaim?: (releasedBytes: number) => void
}

export type MemoryRefusal = 'exceeds-capacity' | 'queue-full' | 'timed-out' | 'aborted'

export class MemoryBudgetError extends Error {
  constructor(
    readonly reason: MemoryRefusal,
    readonly details: { requiredBytes: number; budgetBytes: number; inUseBytes: number; waiting: number },
    readonly retryAfterSeconds: number,
  ) {
    super(`memory admission refused (${reason}): ${details.requiredBytes} bytes needed, ${details.inUseBytes} of ${details.budgetBytes} in use, ${details.waiting} waiting`)
    this.name = 'MemoryBudgetError'
  }
}

/** `release()` frees the bytes once; calling it again does nothing. */
export interface Reservation { readonly bytes: number; release(): void }

interface Waiter { bytes: number; admit(): void }

/** While work waits for memory held by other processes, how often the machine is asked again. */
const RECHECK_MS = 250

export class MemoryBudget {
  readonly #options: MemoryBudgetOptions
  readonly #queue: Waiter[] = []
  #inUse = 0
  #recheck: NodeJS.Timeout | null = null
  /** Bytes released since the last drain (at most one drain is scheduled at a time). */
  #released = 0
  #drainScheduled = false
  /** Moving mean of how long a reservation is held: the basis of `retryAfterSeconds`. */
  #meanHoldMs = 1000

  constructor(options: MemoryBudgetOptions) {
    this.#options = options
  }

  get capacityBytes(): number { return this.#options.capacityBytes }

  stats(): { budgetBytes: number; inUseBytes: number; waiting: number } {
    return { budgetBytes: this.#options.capacityBytes, inUseBytes: this.#inUse, waiting: this.#queue.length }
  }

  /**
   * Resolves once `bytes` are admitted. Refuses at once when they exceed the whole budget or
   * the queue is full; a waiting request is refused at `deadline` (ms on the monotonic clock, shared/clock.ts; capped by
   * `maxWaitMs`) or when `signal` aborts. First come, first served: a large request at the
   * head is not overtaken by smaller ones behind it.
   */
  acquire(bytes: number, options: { deadline?: number; signal?: AbortSignal } = {}): Promise<Reservation> {
    const { capacityBytes, maxWaiting, maxWaitMs } = this.#options
    if (bytes > capacityBytes) return Promise.reject(this.#error('exceeds-capacity', bytes))
    if (options.signal?.aborted) return Promise.reject(this.#error('aborted', bytes))
    if (this.#queue.length === 0 && this.#fits(bytes)) return Promise.resolve(this.#reserve(bytes))
    if (this.#queue.length >= maxWaiting) return Promise.reject(this.#error('queue-full', bytes))
    return new Promise((resolve, reject) => {
      const waitMs = Math.max(0, Math.min(maxWaitMs, (options.deadline ?? Infinity) - monotonicNow()))
      const timer = setTimeout(() => settle('timed-out'), waitMs)
      const onAbort = () => settle('aborted')
      options.signal?.addEventListener('abort', onAbort, { once: true })
      const waiter: Waiter = {
        bytes,
        admit: () => { settle(null); resolve(this.#reserve(bytes)) },
      }
      const settle = (reason: MemoryRefusal | null) => {
        clearTimeout(timer)
        options.signal?.removeEventListener('abort', onAbort)
        const at = this.#queue.indexOf(waiter)
        if (at < 0) return
        this.#queue.splice(at, 1)
        if (reason) {
          reject(this.#error(reason, bytes))
          // The head gave up: the next one may fit.
          if (at === 0) this.#drain()
        }
      }
      this.#queue.push(waiter)
      this.#watch()
    })
  }

  #fits(bytes: number): boolean {
    if (this.#inUse + bytes > this.#options.capacityBytes) return false
    // Nothing admitted: the head must not wait on the machine for ever (the budget is the bound).
    if (this.#inUse === 0) return true
    return this.#inUse + bytes <= (this.#options.available ?? process.availableMemory)()
  }

  #reserve(bytes: number): Reservation {
    this.#inUse += bytes
    const since = performance.now()
    let released = false
    return {
      bytes,
      release: () => {
        if (released) return
        released = true
        this.#inUse -= bytes
        this.#released += bytes
        this.#meanHoldMs = 0.8 * this.#meanHoldMs + 0.2 * (performance.now() - since)
        this.#scheduleDrain()
      },
    }
  }

  /** After the releasing call stack has unwound (its buffers are garbage by then): reclaim, then admit. */
  #scheduleDrain(): void {
    if (this.#drainScheduled) return
    this.#drainScheduled = true
    setImmediate(() => {
      this.#drainScheduled = false
      const released = this.#released
      this.#released = 0
      this.#options.reclaim?.(released)
      this.#drain()
    })
  }

  #drain(): void {
    while (this.#queue.length > 0 && this.#fits(this.#queue[0]!.bytes)) this.#queue[0]!.admit()
    this.#watch()
  }

  /** Work waiting while nothing of ours is released (memory held by other processes): ask again. */
  #watch(): void {
    if (this.#queue.length > 0 && !this.#recheck) {
      this.#recheck = setInterval(() => this.#drain(), RECHECK_MS)
      this.#recheck.unref()
    } else if (this.#queue.length === 0 && this.#recheck) {
      clearInterval(this.#recheck)
      this.#recheck = null
    }
  }

  #error(reason: MemoryRefusal, bytes: number): MemoryBudgetError {
    const waiting = this.#queue.length
    const retryAfterSeconds = Math.min(60, Math.max(1, Math.ceil((this.#meanHoldMs * (waiting + 1)) / 1000)))
    return new MemoryBudgetError(reason, { requiredBytes: bytes, budgetBytes: this.#options.capacityBytes, inUseBytes: this.#inUse, waiting }, retryAfterSeconds)
  }
}

/**
 * The machine's memory: the smaller of physical memory and the cgroup limit
 * (`process.constrainedMemory()` reads cgroup v1 and v2; 0 or a huge value means none).
 */
export function machineMemoryBytes(): number {
  const constrained = process.constrainedMemory()
  return constrained > 0 ? Math.min(os.totalmem(), constrained) : os.totalmem()
}

/**
 * The automatic decode budget: half of the machine's memory, and never more than what is
 * available when the sidecar starts (the runtime, the models and the system keep the rest).
 */
export function automaticBudgetBytes(): number {
  return Math.floor(Math.min(machineMemoryBytes() / 2, process.availableMemory()))
}
