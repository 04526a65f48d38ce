import { Type } from '@sinclair/typebox'
import { sql } from 'drizzle-orm'
import { defineHandler } from '../../shared/handler.ts'
import { events } from '../../shared/db/schema/index.ts'
import { eventConditions, whereAll } from '../../shared/events/query.ts'
import { invalidParam } from '../../shared/errors/index.ts'

// Buckets are UTC calendar periods.
const PERIOD_FORMAT = { hour: '%Y-%m-%dT%H:00:00Z', day: '%Y-%m-%dT00:00:00Z', month: '%Y-%m-01T00:00:00Z' } as const
const MAX_RANGE_MS = 366 * 24 * 60 * 60 * 1000 * 5

const Input = Type.Object({
  startTime: Type.String({ format: 'date-time' }),
  endTime: Type.String({ format: 'date-time' }),
  period: Type.Union([Type.Literal('hour'), Type.Literal('day'), Type.Literal('month')], { default: 'day' }),
  source: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  taskId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  counterId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "One counter line of the task's taskConfig.counters." })),
}, { additionalProperties: false })

export default defineHandler({
  routes: ['/gtw/cwai/Event/PassengerFlowStatistics'],
  auth: 'session',
  body: 'json',
  summary: 'Passenger-flow statistics: sums of in/out of passengerFlow.counted events per hour, day or month (UTC) (spec 4.10).',
  input: Input,
  async handle(input, ctx) {
    if (Date.parse(input.endTime) - Date.parse(input.startTime) > MAX_RANGE_MS) throw invalidParam('/endTime', 'the range may span at most 5 years')
    const conditions = eventConditions({ ...input, kinds: ['passengerFlow.counted'] })
    if (input.taskId) conditions.push(sql`json_extract(${events.payload}, '$.taskId') = ${input.taskId}`)
    if (input.counterId) conditions.push(sql`json_extract(${events.payload}, '$.counterId') = ${input.counterId}`)
    const bucket = sql<string>`strftime(${PERIOD_FORMAT[input.period]}, ${events.time} / 1000, 'unixepoch')`
    const rows = await ctx.db.select({
      periodStart: bucket,
      in: sql<number>`coalesce(sum(json_extract(${events.payload}, '$.in')), 0)`,
      out: sql<number>`coalesce(sum(json_extract(${events.payload}, '$.out')), 0)`,
      events: sql<number>`count(*)`,
    }).from(events).where(whereAll(conditions)).groupBy(bucket).orderBy(bucket)
    const totals = rows.reduce((t, r) => ({ in: t.in + Number(r.in), out: t.out + Number(r.out) }), { in: 0, out: 0 })
    return {
      period: input.period,
      startTime: input.startTime,
      endTime: input.endTime,
      total: { in: totals.in, out: totals.out },
      rows: rows.map((r) => ({ periodStart: r.periodStart, in: Number(r.in), out: Number(r.out), total: Number(r.in) + Number(r.out), events: Number(r.events) })),
    }
  },
})
