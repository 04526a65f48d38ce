import { eq } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { eventCursors } from '../../shared/db/schema/index.ts'

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
