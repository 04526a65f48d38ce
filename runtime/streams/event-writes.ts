import type { Logger } from '../../shared/handler.ts'
import { monotonicNow } from '../../shared/clock.ts'
import { Mutex } from '../keyed-mutex.ts'
import { Samples } from './stats.ts'
import type { Track } from './tracker.ts'

/** Event writes that may wait at once before the frame loop waits for them (memory stays bounded). */
export const EVENT_WRITES_MAX = 16

/**
 * A stream task's event writes, one at a time in the order they were raised, off the frame loop
 * (docs/cameras-and-stream-tasks.md "Snapshots"): an event whose snapshot waits for the camera's
 * full-resolution frame (at most `SNAPSHOT_MAX_SKEW_MS`) does not hold the analysis of the frames
 * after it, and an `object.left` still comes after its `object.entered`. Beyond EVENT_WRITES_MAX
 * waiting, `later` waits for its own write.
 */
export class EventWrites {
  readonly #order = new Mutex()
  #waiting = 0
  /** Analysed frame decoded → its event written, ms (the status's `eventWriteP99Ms`). */
  readonly delay = new Samples()

  constructor(private readonly log: Logger) {}

  /** Queues `write` for the frame decoded at `frameAt` (its monotonic `Frame.at`). */
  async later(frameAt: number, write: () => Promise<unknown>): Promise<void> {
    this.#waiting++
    const done = this.#order.run(write)
      .then(() => this.delay.add(monotonicNow() - frameAt), (error: Error) => this.log.error({ err: error.message }, 'stream task event not written'))
      .finally(() => { this.#waiting-- })
    if (this.#waiting > EVENT_WRITES_MAX) await done
  }

  /** Resolves once every write queued so far has ended. */
  drained(): Promise<void> {
    return this.#order.run(async () => undefined)
  }
}

/** A track as it is now, for a write that runs after the tracker has moved on (its box is updated in place). */
export const trackNow = (track: Track): Track => ({ ...track, box: { ...track.box }, velocity: { ...track.velocity } })
