import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { PageNumber, PageSize } from '../../shared/http/paging.ts'

const Filter = Type.Optional(Type.String({ maxLength: 128 }))

export default defineHandler({
  // spec 4.2 (paths match case-insensitively, so 4.10's `/gtw/cwai/Algorithm/` reaches it too).
  routes: ['/gtw/cwai/algorithm/page'],
  auth: 'session',
  body: 'json',
  summary: 'Page through the image-analysis algorithms (spec 4.2, 2.3).',
  input: Type.Object({
    algorithmUsage: Filter,
    algorithmName: Filter,
    supplier: Filter,
    algorithmId: Filter,
    algorithmCategory: Filter,
    pageNum: Type.Optional(PageNumber()),
    pageSize: Type.Optional(PageSize(10, 1000)),
  }),
  handle(input, ctx) {
    // Empty filters select everything (spec 4.2: "empty allowed").
    return ctx.algorithms.page({ ...input, pageNum: input.pageNum ?? 1, pageSize: input.pageSize ?? 10 })
  },
})
