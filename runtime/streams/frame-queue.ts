import { monotonicNow } from '../../shared/clock.ts'
import type { Frame } from '../cameras/reader.ts'
import { Rate } from './stats.ts'

/** Frames waiting for the motion gate; beyond this the oldest is dropped (real time over every frame). */
const QUEUE_CAPACITY = 2

/**
 * A stream task's frames from its camera reader, waiting for its gate: a bounded queue that
 * drops the oldest when the gate falls behind (docs/architecture.md "How a frame travels").
 * Counts what comes in and what it drops.
 */
export class FrameQueue {
  #frames: Frame[] = []
  #wake: (() => void) | null = null
  #open = false
  framesIn = 0
  dropped = 0
  readonly inputRate = new Rate()

  push(frame: Frame): void {
    this.framesIn++
    this.inputRate.tick(monotonicNow())
    if (this.#frames.length >= QUEUE_CAPACITY) {
      this.#frames.shift()
      this.dropped++
    }
    this.#frames.push(frame)
    this.#wake?.()
  }

  /** The oldest frame, once there is one; null once the queue is closed. */
  async next(): Promise<Frame | null> {
    while (this.#open && this.#frames.length === 0) await new Promise<void>((resolve) => { this.#wake = resolve })
    this.#wake = null
    return this.#open ? this.#frames.shift()! : null
  }

  open(): void {
    this.#open = true
  }

  /** Ends a `next` that waits: it resolves null. */
  close(): void {
    this.#open = false
    this.#wake?.()
  }

  clear(): void {
    this.#frames = []
  }
}
