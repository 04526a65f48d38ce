import { Type } from '@sinclair/typebox'
import { and, asc, count, eq, type SQL } from 'drizzle-orm'
import { containsText } from '../../shared/db/like.ts'
import { algorithms } from '../../shared/db/schema/index.ts'
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
  async handle(input, ctx) {
    // Empty filters select everything (spec 4.2: "empty allowed").
    const conditions: SQL[] = []
    if (input.algorithmUsage) conditions.push(eq(algorithms.algorithmUsage, input.algorithmUsage))
    if (input.algorithmId) conditions.push(eq(algorithms.algorithmId, input.algorithmId))
    if (input.algorithmCategory) conditions.push(eq(algorithms.algorithmCategory, input.algorithmCategory))
    if (input.algorithmName) conditions.push(containsText(algorithms.algorithmName, input.algorithmName))
    if (input.supplier) conditions.push(containsText(algorithms.supplier, input.supplier))
    const where = conditions.length > 0 ? and(...conditions) : undefined
    const pageNum = input.pageNum ?? 1
    const pageSize = input.pageSize ?? 10
    const [{ total } = { total: 0 }] = await ctx.db.select({ total: count() }).from(algorithms).where(where)
    const rows = await ctx.db.select().from(algorithms).where(where).orderBy(asc(algorithms.algorithmId))
      .limit(pageSize).offset((pageNum - 1) * pageSize)
    return {
      total,
      rows: rows.map((r) => ({
        algorithmId: r.algorithmId,
        algorithmName: r.algorithmName,
        algorithmUsage: r.algorithmUsage,
        algorithmCategory: r.algorithmCategory,
        supplier: r.supplier,
        version: r.version,
        description: r.description,
        runningStatus: r.runningStatus,
        models: r.models,
        // As the other algorithm routes answer a row (shared/algorithms/view.ts).
        origin: r.source,
        updateTime: String(r.updatedAt),
      })),
    }
  },
})
