import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { EventFilter, PayloadFilter } from '../../shared/events/query.ts'
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
    const { total, rows } = await ctx.events.history.page(input, input.pageNum, input.pageSize)
    return {
      total,
      pageNum: input.pageNum,
      pageSize: input.pageSize,
      rows: rows.map((row) => {
        const payload = JSON.parse(row.payload) as Record<string, unknown>
        return {
          id: row.id, kind: row.kind as EventKind, time: new Date(row.time).toISOString(), source: row.source, payload,
          thumbnailUrl: text(payload.snapshotUrl) ?? text(payload.imageUrl), clipUrl: text(payload.clipUrl) ?? row.recordedClipUrl,
        }
      }),
    }
  },
})
