import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { PageNumber, PageSize } from '../../shared/http/paging.ts'

export default defineHandler({
  routes: ['/gtw/cwai/atomic/Model/list'],
  auth: 'session',
  body: 'json',
  summary: 'Managed models (preset and user), paged.',
  input: Type.Object({
    source: Type.Optional(Type.Union([Type.Literal('preset'), Type.Literal('user')])),
    pageNo: Type.Optional(PageNumber()),
    pageSize: Type.Optional(PageSize(20, 200)),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    const pageNo = input.pageNo ?? 1
    const pageSize = input.pageSize ?? 20
    const rows = await ctx.models.list({ source: input.source, offset: (pageNo - 1) * pageSize, limit: pageSize })
    return { total: await ctx.models.count(input.source), pageNo, pageSize, rows }
  },
})
