import { asc, desc, gt, lt, lte, max, min } from 'drizzle-orm'
import type { Client } from '@libsql/client'
import type { Db } from '../db/client.ts'
import { events } from '../../shared/db/schema/index.ts'
import { EVENT_KINDS, isEventKind, type EventKind } from '../../shared/events/kinds.ts'
import type { DeviceEvent, EmitOptions } from '../../shared/events/types.ts'
import type { Clock, Logger } from '../../shared/handler.ts'

type Row = typeof events.$inferSelect
type NewRow = typeof events.$inferInsert

// The JSON text of an event, made once and shared by every channel (WebSocket frame, MQTT
// payload, webhook body all carry it verbatim).
const serialized = new WeakMap<DeviceEvent, string>()
export function eventJson(event: DeviceEvent): string {
  let text = serialized.get(event)
  if (text === undefined) {
    text = JSON.stringify(event)
    serialized.set(event, text)
  }
  return text
}

export const toDeviceEvent = (row: Row): DeviceEvent => ({
  id: row.id,
  kind: row.kind as EventKind,
  time: new Date(row.time).toISOString(),
  source: row.source,
  payload: JSON.parse(row.payload),
})

// Events emitted outside a transaction are written together (group commit): the first
// emit opens a short window, then one multi-row insert commits everything that arrived.
// The embedded database commits synchronously (the fsync blocks the event loop), so fewer,
// larger commits keep the loop free under load.
const MAX_GROUP = 1000
const GROUP_WINDOW_MS = 2
// Recently written events kept in memory, so live channels rarely read the database.
const RECENT_CAPACITY = 20_000

/**
 * The outbox: writes events, tells channels when new ones exist, reads them in id order and
 * prunes them (bounded retention). Channels keep their own cursors (see tail.ts).
 */
export class Outbox {
  private pending: { row: NewRow; resolve(id: number): void; reject(error: unknown): void }[] = []
  private flushScheduled = false
  private readonly listeners = new Set<() => void>()
  private highest = 0
  /** Events this process wrote outside transactions, in id order (ids may have gaps). */
  private recent: DeviceEvent[] = []

  constructor(private readonly db: Db, private readonly client: Client, private readonly clock: Clock, private readonly log: Logger) {}

  async init(): Promise<void> {
    const [row] = await this.db.select({ id: max(events.id) }).from(events)
    this.highest = row?.id ?? 0
  }

  /** The highest event id written so far (by this process). */
  get lastId(): number {
    return this.highest
  }

  emit(kind: EventKind, payload: Record<string, unknown>, options: EmitOptions = {}): Promise<number> {
    if (!isEventKind(kind)) return Promise.reject(new Error(`unknown event kind ${String(kind)}`))
    const row: NewRow = { kind, time: this.clock.now(), source: options.source ?? EVENT_KINDS[kind].source, payload: JSON.stringify(payload) }
    if (options.tx) return this.emitInTransaction(options.tx as Db, row)
    return new Promise((resolve, reject) => {
      this.pending.push({ row, resolve, reject })
      if (!this.flushScheduled) {
        this.flushScheduled = true
        setTimeout(() => void this.flush(), GROUP_WINDOW_MS)
      }
    })
  }

  private async emitInTransaction(tx: Db, row: NewRow): Promise<number> {
    const [inserted] = await tx.insert(events).values(row).returning({ id: events.id })
    // The row is visible to channels once the caller's transaction commits: wake them shortly
    // after; the poll interval catches a transaction that takes longer.
    setTimeout(() => this.wake(inserted!.id), 5).unref()
    return inserted!.id
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const group = this.pending.splice(0, MAX_GROUP)
      try {
        // One plain multi-row statement: building it through the query builder costs more
        // than the insert itself at thousands of rows per second.
        const args: (string | number)[] = []
        for (const { row } of group) args.push(row.kind, row.time!, row.source, row.payload)
        const result = await this.client.execute({
          sql: `INSERT INTO events (kind, time, source, payload) VALUES ${group.map(() => '(?, ?, ?, ?)').join(', ')} RETURNING id`,
          args,
        })
        const ids = result.rows.map((r) => Number(r.id)).sort((a: number, b: number) => a - b)
        // Ids are assigned in insertion order within one statement.
        group.forEach((p, i) => {
          const row = p.row
          this.recent.push({ id: ids[i]!, kind: row.kind as EventKind, time: new Date(row.time!).toISOString(), source: row.source, payload: JSON.parse(row.payload) })
          p.resolve(ids[i]!)
        })
        if (this.recent.length > RECENT_CAPACITY) this.recent = this.recent.slice(-RECENT_CAPACITY / 2)
        this.wake(ids[ids.length - 1]!)
      } catch (error) {
        this.log.error({ err: error, count: group.length }, 'writing events to the outbox failed')
        for (const p of group) p.reject(error)
      }
    }
    this.flushScheduled = false
  }

  private wake(id: number): void {
    if (id > this.highest) this.highest = id
    for (const listener of this.listeners) listener()
  }

  /** Calls `listener` whenever new events may exist; returns the unsubscribe function. */
  onNew(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /**
   * Events with id > afterId in id order, optionally of some kinds only, and the highest id
   * looked at (the cursor moves past events a filter skipped). The range is read on the
   * primary key and filtered here, so a read costs the same however large the outbox is.
   */
  async read(afterId: number, limit: number, kinds: readonly string[] | null = null, fromDatabase = false): Promise<{ events: DeviceEvent[]; scannedTo: number }> {
    const fromMemory = fromDatabase ? null : this.readRecent(afterId, limit)
    const rows = fromMemory ?? (await this.db.select().from(events).where(gt(events.id, afterId)).orderBy(asc(events.id)).limit(limit)).map(toDeviceEvent)
    const last = rows[rows.length - 1]
    if (!last) return { events: [], scannedTo: afterId }
    if (last.id > this.highest) this.highest = last.id
    return { events: kinds && kinds.length > 0 ? rows.filter((r) => kinds.includes(r.kind)) : rows, scannedTo: last.id }
  }

  /**
   * Serves a read from the recent events when they hold the next ids without a gap. A gap
   * is an event written in a transaction (or by another process): SQLite has one writer, so
   * it committed before the later ids were assigned and the database has it.
   */
  private readRecent(afterId: number, limit: number): DeviceEvent[] | null {
    const recent = this.recent
    if (recent.length === 0 || recent[0]!.id > afterId + 1) return null
    // Binary search for the first event after afterId.
    let lo = 0
    let hi = recent.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (recent[mid]!.id <= afterId) lo = mid + 1
      else hi = mid
    }
    if (lo === recent.length) return afterId >= this.highest ? [] : null
    const out: DeviceEvent[] = []
    let expected = afterId + 1
    for (let i = lo; i < recent.length && out.length < limit && recent[i]!.id === expected; i++, expected++) out.push(recent[i]!)
    return out.length > 0 ? out : null
  }

  async oldestId(): Promise<number | null> {
    const [row] = await this.db.select({ id: min(events.id) }).from(events)
    return row?.id ?? null
  }

  /** Bounded retention: drops events older than `retentionMs` and all but the newest `maxRows`. */
  async prune(retentionMs: number, maxRows: number): Promise<number> {
    this.recent = []
    let removed = 0
    if (retentionMs > 0) {
      const result = await this.db.delete(events).where(lt(events.time, this.clock.now() - retentionMs))
      removed += result.rowsAffected
    }
    if (maxRows > 0) {
      const [edge] = await this.db.select({ id: events.id }).from(events).orderBy(desc(events.id)).limit(1).offset(maxRows)
      if (edge) removed += (await this.db.delete(events).where(lte(events.id, edge.id))).rowsAffected
    }
    return removed
  }
}
