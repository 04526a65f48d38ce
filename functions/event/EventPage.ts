import { Type } from '@sinclair/typebox'
import { and, count, desc, eq, inArray, sql } from 'drizzle-orm'
import { defineHandler } from '../../shared/handler.ts'
import { events } from '../../shared/db/schema/index.ts'
import { CLIP_READY_KIND, EventFilter, PayloadFilter, eventConditions, payloadConditions, whereAll } from '../../shared/events/query.ts'
import { PageNumber, PageSize } from '../../shared/http/paging.ts'
import type { EventKind } from '../../shared/events/kinds.ts'

const Input = Type.Object({
  pageNum: PageNumber(),
  pageSize: PageSize(20, 500),
  ...EventFilter,
  ...PayloadFilter,
}, { additionalProperties: false })

const text = (value: unknown) => (typeof value === 'string' ? value : null)

export default defineHandler({
  routes: ['/gtw/cwai/Event/EventPage'],
  auth: 'session',
  body: 'json',
  summary: 'Event pagination, newest first, filtered by kinds, source, time range, camera, task and label (spec 6, 4.10); each row with its thumbnailUrl (the event\'s snapshot) and clipUrl (its clip), null when it has none.',
  input: Input,
  async handle(input, ctx) {
    const where = whereAll([...eventConditions(input), ...payloadConditions(input)])
    const [total] = await ctx.db.select({ n: count() }).from(events).where(where)
    const rows = await ctx.db.select().from(events).where(where).orderBy(desc(events.id))
      .limit(input.pageSize).offset((input.pageNum - 1) * input.pageSize)
    // Clips recorded for these events afterwards (the recording area's clip events).
    const eventId = sql<number>`json_extract(${events.payload}, '$.eventId')`
    const clips = rows.length === 0 ? [] : await ctx.db.select({ eventId, clipUrl: sql<string>`json_extract(${events.payload}, '$.clipUrl')` })
      .from(events).where(and(eq(events.kind, CLIP_READY_KIND), inArray(eventId, rows.map((r) => r.id))))
    const clipOf = new Map(clips.map((c) => [Number(c.eventId), c.clipUrl]))
    return {
      total: total?.n ?? 0,
      pageNum: input.pageNum,
      pageSize: input.pageSize,
      rows: rows.map((row) => {
        const payload = JSON.parse(row.payload) as Record<string, unknown>
        return {
          id: row.id, kind: row.kind as EventKind, time: new Date(row.time).toISOString(), source: row.source, payload,
          thumbnailUrl: text(payload.snapshotUrl) ?? text(payload.imageUrl), clipUrl: text(payload.clipUrl) ?? clipOf.get(row.id) ?? null,
        }
      }),
    }
  },
})
