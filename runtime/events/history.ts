import { and, asc, count, desc, eq, gt, gte, inArray, lt, sql, type SQL } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { events, webhookDeadLetters } from '../../shared/db/schema/index.ts'
import { invalidParam } from '../../shared/errors/index.ts'
import { CLIP_READY_KIND } from '../../shared/events/query.ts'
import { alarmKinds } from '../../shared/events/kinds.ts'
import type { EventHistory, EventQuery } from '../../shared/events/types.ts'
import { alarmExport, type EventReader } from './alarm-export.ts'

/** The WHERE conditions of the Event endpoints' filters; an empty or inverted time range is InvalidParam. */
function eventConditions(filter: EventQuery, restrictKinds?: readonly string[]): SQL[] {
  const start = filter.startTime === undefined ? null : Date.parse(filter.startTime)
  const end = filter.endTime === undefined ? null : Date.parse(filter.endTime)
  if (start !== null && end !== null && start >= end) throw invalidParam('/endTime', 'must be later than startTime')
  const conditions: SQL[] = []
  let kinds = filter.kinds && filter.kinds.length > 0 ? filter.kinds : null
  if (restrictKinds) kinds = kinds ? kinds.filter((k) => restrictKinds.includes(k)) : [...restrictKinds]
  if (kinds) conditions.push(kinds.length ? inArray(events.kind, kinds) : eq(events.id, -1))
  if (filter.source) conditions.push(eq(events.source, filter.source))
  if (start !== null) conditions.push(gte(events.time, start))
  if (end !== null) conditions.push(lt(events.time, end))
  return conditions
}

/** Payload fields a filter may name: the camera, task and label of analysis events (EventPage, ExportAlarms), a counter line. */
type PayloadField = 'cameraId' | 'taskId' | 'label' | 'counterId'

/** The filter's payload conditions on `fields`, each `payload.<field> = value`. */
function payloadConditions(filter: Partial<Record<PayloadField, string>>, fields: readonly PayloadField[] = ['cameraId', 'taskId', 'label']): SQL[] {
  return fields.filter((field) => filter[field] !== undefined)
    .map((field) => sql`json_extract(${events.payload}, ${`$.${field}`}) = ${filter[field]}`)
}

const whereAll = (conditions: SQL[]) => (conditions.length ? and(...conditions) : undefined)

// Buckets are UTC calendar periods.
const PERIOD_FORMAT = { hour: '%Y-%m-%dT%H:00:00Z', day: '%Y-%m-%dT00:00:00Z', month: '%Y-%m-01T00:00:00Z' } as const

/** `ctx.events.history` (shared/events/types.ts): reads of the outbox (`events`) and the dead letters. */
export class EventHistoryQueries implements EventHistory {
  readonly #db: Db

  constructor(db: Db) {
    this.#db = db
  }

  async page(query: EventQuery, pageNum: number, pageSize: number) {
    const where = whereAll([...eventConditions(query), ...payloadConditions(query)])
    const [total] = await this.#db.select({ n: count() }).from(events).where(where)
    const rows = await this.#db.select().from(events).where(where).orderBy(desc(events.id))
      .limit(pageSize).offset((pageNum - 1) * pageSize)
    // Clips recorded for these events afterwards (the recording area's clip events).
    const eventId = sql<number>`json_extract(${events.payload}, '$.eventId')`
    const clips = rows.length === 0 ? [] : await this.#db.select({ eventId, clipUrl: sql<string>`json_extract(${events.payload}, '$.clipUrl')` })
      .from(events).where(and(eq(events.kind, CLIP_READY_KIND), inArray(eventId, rows.map((r) => r.id))))
    const clipOf = new Map(clips.map((c) => [Number(c.eventId), c.clipUrl]))
    return { total: total?.n ?? 0, rows: rows.map((row) => ({ ...row, recordedClipUrl: clipOf.get(row.id) ?? null })) }
  }

  /** The events of `kinds` (within the query's own) oldest first, in pages after an id (keyset); the query is checked at once. */
  #reader(query: EventQuery, kinds: readonly string[]): EventReader {
    const conditions = [...eventConditions(query, kinds), ...payloadConditions(query)]
    return {
      after: (afterId: number, limit: number) =>
        this.#db.select().from(events).where(whereAll([...conditions, gt(events.id, afterId)])).orderBy(asc(events.id)).limit(limit),
    }
  }

  exportAlarms(query: EventQuery, options: Parameters<EventHistory['exportAlarms']>[1]) {
    return alarmExport(this.#reader(query, alarmKinds), options)
  }

  async passengerFlow(query: Parameters<EventHistory['passengerFlow']>[0]) {
    const conditions = [...eventConditions({ ...query, kinds: ['passengerFlow.counted'] }), ...payloadConditions(query, ['taskId', 'counterId'])]
    const bucket = sql<string>`strftime(${PERIOD_FORMAT[query.period]}, ${events.time} / 1000, 'unixepoch')`
    const rows = await this.#db.select({
      periodStart: bucket,
      in: sql<number>`coalesce(sum(json_extract(${events.payload}, '$.in')), 0)`,
      out: sql<number>`coalesce(sum(json_extract(${events.payload}, '$.out')), 0)`,
      events: sql<number>`count(*)`,
    }).from(events).where(whereAll(conditions)).groupBy(bucket).orderBy(bucket)
    return rows.map((r) => ({ periodStart: r.periodStart, in: Number(r.in), out: Number(r.out), events: Number(r.events) }))
  }

  async deadLetters(pageNum: number, pageSize: number) {
    const [total] = await this.#db.select({ n: count() }).from(webhookDeadLetters)
    const rows = await this.#db.select({ dead: webhookDeadLetters, event: events }).from(webhookDeadLetters)
      .leftJoin(events, eq(events.id, webhookDeadLetters.eventId))
      .orderBy(desc(webhookDeadLetters.id)).limit(pageSize).offset((pageNum - 1) * pageSize)
    return {
      total: total?.n ?? 0,
      rows: rows.map(({ dead, event }) => ({
        eventId: dead.eventId, url: dead.url, attempts: dead.attempts, lastError: dead.lastError,
        firstAttemptAt: dead.firstAttemptAt, deadAt: dead.deadAt, event,
      })),
    }
  }

  async recent(kind: string, since: number, limit: number) {
    const [recent] = await this.#db.select({ n: count() }).from(events).where(and(eq(events.kind, kind), gte(events.time, since)))
    const latest = await this.#db.select().from(events).where(eq(events.kind, kind)).orderBy(desc(events.id)).limit(limit)
    return { count: recent?.n ?? 0, latest }
  }
}
