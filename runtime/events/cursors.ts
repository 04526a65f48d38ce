import { eq } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { eventCursors } from '../../shared/db/schema/index.ts'
import { monotonicNow } from '../../shared/clock.ts'

/** Persisted per-channel cursors (the last delivered event id). */
export class CursorStore {
  constructor(private readonly db: Db, private readonly now: () => number) {}

  async get(channel: string): Promise<number | null> {
    const [row] = await this.db.select().from(eventCursors).where(eq(eventCursors.channel, channel)).limit(1)
    return row ? row.lastId : null
  }

  /** The channel's cursor; a channel seen for the first time starts after `initial` (no history flood). */
  async getOrCreate(channel: string, initial: number): Promise<number> {
    const existing = await this.get(channel)
    if (existing !== null) return existing
    await this.set(channel, initial)
    return initial
  }

  async set(channel: string, lastId: number): Promise<void> {
    const values = { lastId, updatedAt: this.now() }
    await this.db.insert(eventCursors).values({ channel, ...values }).onConflictDoUpdate({ target: eventCursors.channel, set: values })
  }
}

/**
 * Saves a cursor at most every `intervalMs`, with a trailing save of the latest value
 * (at-least-once: a crash repeats at most that much). `flush()` saves at once (on stop).
 */
export function throttledSave(save: (id: number) => Promise<void>, intervalMs = 200) {
  let last = 0
  let latest = -1
  let saved = -1
  let timer: NodeJS.Timeout | null = null
  const write = async () => {
    if (timer) clearTimeout(timer)
    timer = null
    if (latest === saved) return
    const id = latest
    last = monotonicNow()
    await save(id)
    saved = Math.max(saved, id)
  }
  const throttled = async (id: number) => {
    latest = id
    if (monotonicNow() - last >= intervalMs) return write()
    timer ??= setTimeout(() => void write().catch(() => {}), intervalMs)
    timer.unref()
  }
  return Object.assign(throttled, { flush: write })
}
