import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { PageNumber, PageSize } from '../../shared/http/paging.ts'

export default defineHandler({
  routes: ['/v1/cwai/aihost/QueryTaskList'],
  auth: 'session',
  body: 'json',
  summary: 'Image-analysis tasks, most recently changed first, with the QueryTaskStatus fields and who created them (user id and account name): created ones unless `state` asks for cancelled ones.',
  input: Type.Object({
    state: Type.Optional(Type.Union([Type.Literal('created'), Type.Literal('cancelled')])),
    pageNum: Type.Optional(PageNumber()),
    pageSize: Type.Optional(PageSize(50, 200)),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    const pageNum = input.pageNum ?? 1
    const pageSize = input.pageSize ?? 50
    const { total, rows } = await ctx.tasks.list({ state: input.state, offset: (pageNum - 1) * pageSize, limit: pageSize })
    const creators = [...new Set(rows.map((task) => task.createdBy).filter((id): id is string => !!id))]
    const names = await ctx.accounts.names(creators)
    return {
      total, pageNum, pageSize,
      rows: rows.map((task) => ({ ...ctx.tasks.status(task), createdBy: task.createdBy, createdByAccount: task.createdBy ? names.get(task.createdBy) ?? null : null })),
    }
  },
})
