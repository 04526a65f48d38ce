import { Mutex } from '../../keyed-mutex.ts'

/**
 * How long a write waits for the gate before it runs anyway, and SQLite answers SQLITE_BUSY as
 * it would without the gate: a write awaited on the client inside a transaction of the same
 * client (instead of on the transaction) fails instead of waiting for itself forever.
 */
export const WRITE_WAIT_MS = 15_000

/**
 * Statements that only read — a SELECT, an EXPLAIN, a PRAGMA that sets nothing — never wait
 * (write-ahead logging lets them run beside the writer). Anything else may write, and waits.
 */
export const READS_ONLY = /^\s*(SELECT|EXPLAIN)\b|^\s*PRAGMA\s+[\w.]+\s*(\([^)]*\))?\s*;?\s*$/i

/**
 * One writer at a time across an embedded client's connections, as SQLite allows one. A
 * transaction that may write holds the gate from its BEGIN to its end (commit, rollback or
 * close); a write outside it — a statement, a batch, a migration, another transaction — waits
 * its turn (first come, first served) instead of failing at once with SQLITE_BUSY. A busy
 * timeout inside SQLite would not do: the embedded driver runs statements synchronously, so
 * waiting there blocks the event loop that the transaction holding the lock needs to finish.
 */
export class WriteGate {
  readonly #order = new Mutex()

  /** Waits for the gate (at most `maxWaitMs`), then holds it until the returned release is called. */
  async hold(maxWaitMs = WRITE_WAIT_MS): Promise<() => void> {
    let released = false
    let end: (() => void) | null = null
    const granted = new Promise<void>((resolve) => {
      void this.#order.run(() => new Promise<void>((done) => {
        if (released) return done()
        end = done
        resolve()
      }))
    })
    let timer: NodeJS.Timeout | undefined
    await Promise.race([granted, new Promise<void>((resolve) => { timer = setTimeout(resolve, maxWaitMs) })])
    clearTimeout(timer)
    return () => {
      released = true
      end?.()
    }
  }

  /** Whether a transaction holds the gate or a write waits for it. */
  get busy(): boolean {
    return this.#order.busy
  }

  /** Runs `write` holding the gate (waiting for it at most `maxWaitMs`). */
  async run<T>(write: () => Promise<T>, maxWaitMs = WRITE_WAIT_MS): Promise<T> {
    const release = await this.hold(maxWaitMs)
    try {
      return await write()
    } finally {
      release()
    }
  }
}
