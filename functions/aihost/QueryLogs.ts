import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { invalidParam } from '../../shared/errors/index.ts'
import { PageNumber, PageSize } from '../../shared/http/paging.ts'

// Epoch milliseconds: as a number, within what the string form allows (15 digits).
const Millis = Type.Union([Type.Integer({ minimum: 0, maximum: 999_999_999_999_999 }), Type.String({ pattern: '^[0-9]{1,15}$' })])

export default defineHandler({
  routes: ['/v1/cwai/aihost/QueryLogs'],
  auth: 'session',
  body: 'json',
  summary: 'Structured device logs filtered by level, time range, request id and text; paged, newest first.',
  input: Type.Object({
    level: Type.Optional(Type.Union(['trace', 'debug', 'info', 'warn', 'error', 'fatal'].map((l) => Type.Literal(l)))),
    startTime: Type.Optional(Millis),
    endTime: Type.Optional(Millis),
    requestId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    text: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    pageNo: Type.Optional(PageNumber()),
    pageSize: Type.Optional(PageSize(50, 500)),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    const from = input.startTime === undefined ? undefined : Number(input.startTime)
    const to = input.endTime === undefined ? undefined : Number(input.endTime)
    if (from !== undefined && to !== undefined && from > to) throw invalidParam('/endTime', 'must not be before startTime')
    const page = await ctx.device.queryLogs({
      level: input.level as 'info' | undefined,
      from,
      to,
      requestId: input.requestId,
      text: input.text,
      pageNo: input.pageNo ?? 1,
      pageSize: input.pageSize ?? 50,
    })
    return { ...page, total: page.total, bytesScanned: String(page.bytesScanned) }
  },
})
