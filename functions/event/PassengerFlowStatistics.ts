import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { invalidParam } from '../../shared/errors/index.ts'

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
    const rows = await ctx.events.history.passengerFlow(input)
    const totals = rows.reduce((t, r) => ({ in: t.in + r.in, out: t.out + r.out }), { in: 0, out: 0 })
    return {
      period: input.period,
      startTime: input.startTime,
      endTime: input.endTime,
      total: { in: totals.in, out: totals.out },
      rows: rows.map((r) => ({ periodStart: r.periodStart, in: r.in, out: r.out, total: r.in + r.out, events: r.events })),
    }
  },
})
