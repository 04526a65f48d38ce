import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { layoutRow } from '../../shared/algorithms/view.ts'
import { PageNumber, PageSize } from '../../shared/http/paging.ts'

export default defineHandler({
  routes: ['/gtw/cwai/algorithm/layout/list'],
  auth: 'session',
  body: 'json',
  summary: 'Pages through pipeline layouts (ordered by algorithmId), optionally by origin (preset, package, layout).',
  input: Type.Object({
    origin: Type.Optional(Type.Union([Type.Literal('preset'), Type.Literal('package'), Type.Literal('layout')])),
    pageNum: Type.Optional(PageNumber()),
    pageSize: Type.Optional(PageSize(10, 1000)),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    const all = ctx.algorithms.list().filter((e) => !input.origin || e.origin === input.origin)
    const pageSize = input.pageSize ?? 10
    const start = ((input.pageNum ?? 1) - 1) * pageSize
    return { total: all.length, rows: all.slice(start, start + pageSize).map(layoutRow) }
  },
})
