import { Type } from '@sinclair/typebox'
import { count, desc } from 'drizzle-orm'
import { defineHandler } from '../../shared/handler.ts'
import { events } from '../../shared/db/schema/index.ts'
import { EventFilter, eventConditions, whereAll } from '../../shared/events/query.ts'
import { PageNumber, PageSize } from '../../shared/http/paging.ts'

const Input = Type.Object({
  pageNum: PageNumber(),
  pageSize: PageSize(20, 500),
  ...EventFilter,
}, { additionalProperties: false })

export default defineHandler({
  routes: ['/gtw/cwai/Event/EventPage'],
  auth: 'session',
  body: 'json',
  summary: 'Event pagination, newest first, filtered by kinds, source and time range (spec 6, 4.10).',
  input: Input,
  async handle(input, ctx) {
    const where = whereAll(eventConditions(input))
    const [total] = await ctx.db.select({ n: count() }).from(events).where(where)
    const rows = await ctx.db.select().from(events).where(where).orderBy(desc(events.id))
      .limit(input.pageSize).offset((input.pageNum - 1) * input.pageSize)
    return {
      total: total?.n ?? 0,
      pageNum: input.pageNum,
      pageSize: input.pageSize,
      rows: rows.map((row) => ({ id: row.id, kind: row.kind, time: new Date(row.time).toISOString(), source: row.source, payload: JSON.parse(row.payload) })),
    }
  },
})
