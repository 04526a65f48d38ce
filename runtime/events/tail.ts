import type { DeviceEvent } from '../../shared/events/types.ts'
import type { Logger } from '../../shared/handler.ts'
import type { Outbox } from './outbox.ts'

export interface TailOptions {
  outbox: Outbox
  /** Deliver events with ids after this one. */
  from: number
  kinds?: readonly string[] | null
  batch?: number
  /** Re-read at least this often even without a wake-up (transactions, other processes). */
  pollMs: number
  /** Delivers a batch in order; throwing leaves the cursor where it was and retries after `retryMs`. */
  deliver(events: DeviceEvent[]): Promise<void>
  /** Called after a batch was delivered (persist the cursor). */
  delivered?(lastId: number): Promise<void> | void
  retryMs?: number
  log: Logger
  name: string
}

/**
 * One channel's reader of the outbox: reads events after its cursor, delivers them, moves the
 * cursor, waits for new events. Each channel (and each WebSocket client) has its own tail, so
 * a slow channel only delays itself.
 */
export class Tail {
  cursor: number
  lastError: string | null = null
  private running = false
  private wakeUp: (() => void) | null = null
  private unsubscribe: (() => void) | null = null
  private loop: Promise<void> | null = null
  private dirty = false
  /** The last wait ended by its timer: read the database (events of other writers). */
  private timedOut = false
  private retrying = false
  private delivering = false
  private rewindTo: number | null = null

  constructor(private readonly options: TailOptions) {
    this.cursor = options.from
  }

  start(): void {
    if (this.running) return
    this.running = true
    this.unsubscribe = this.options.outbox.onNew(() => this.nudge())
    this.loop = this.run()
  }

  /** New events may exist: re-read now (unless waiting to retry a failed delivery). */
  nudge(): void {
    this.dirty = true
    if (!this.retrying) this.wakeUp?.()
  }

  /**
   * Moves the read position back (a channel that delivers asynchronously lost what it had
   * in flight): reading continues after `id`.
   */
  rewind(id: number): void {
    if (this.delivering) this.rewindTo = Math.min(this.rewindTo ?? id, id)
    else this.cursor = Math.min(this.cursor, id)
    this.kick()
  }

  /** The channel became ready (e.g. MQTT registered): retry at once. */
  kick(): void {
    this.dirty = true
    this.wakeUp?.()
  }

  async stop(): Promise<void> {
    this.running = false
    this.unsubscribe?.()
    this.wakeUp?.()
    await this.loop
  }

  private wait(ms: number): Promise<void> {
    if ((this.dirty && !this.retrying) || !this.running) return Promise.resolve()
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.timedOut = true
        done()
      }, ms)
      function done() {
        clearTimeout(timer)
        resolve()
      }
      this.wakeUp = done
    }).then(() => {
      this.wakeUp = null
    })
  }

  private async run(): Promise<void> {
    const { outbox, kinds = null, batch = 200, pollMs, retryMs = 1000, log } = this.options
    while (this.running) {
      this.dirty = false
      let read: { events: DeviceEvent[]; scannedTo: number }
      try {
        read = await outbox.read(this.cursor, batch, kinds, this.timedOut)
        this.timedOut = false
      } catch (error) {
        log.error({ err: error, channel: this.options.name }, 'reading the outbox failed')
        await this.wait(retryMs)
        continue
      }
      if (read.scannedTo === this.cursor) {
        await this.wait(pollMs)
        continue
      }
      this.delivering = true
      try {
        if (read.events.length > 0) await this.options.deliver(read.events)
        this.cursor = this.rewindTo ?? read.scannedTo
        this.lastError = null
        await this.options.delivered?.(this.cursor)
        this.dirty = true
      } catch (error) {
        this.lastError = (error as Error).message
        if (!this.running) break
        log.debug({ err: error, channel: this.options.name }, 'event delivery failed; will retry')
        this.retrying = true
        await this.wait(retryMs)
        this.retrying = false
      } finally {
        this.delivering = false
        if (this.rewindTo !== null) this.cursor = Math.min(this.cursor, this.rewindTo)
        this.rewindTo = null
      }
    }
  }
}
