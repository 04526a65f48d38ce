import { Type } from '@sinclair/typebox'
import { asc, gt } from 'drizzle-orm'
import { defineHandler } from '../../shared/handler.ts'
import { events } from '../../shared/db/schema/index.ts'
import { alarmKinds } from '../../shared/events/kinds.ts'
import { EventFilter, eventConditions, whereAll } from '../../shared/events/query.ts'

const Input = Type.Object({ ...EventFilter }, { additionalProperties: false })

const PAGE = 500
const COLUMNS = ['id', 'time', 'kind', 'source', 'payload']

/** RFC 4180 quoting; a leading formula character is neutralised for spreadsheet safety. */
const cell = (value: string) => {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe
}

export default defineHandler({
  routes: ['/gtw/cwai/Event/ExportAlarms'],
  auth: 'session',
  body: 'json',
  summary: 'Alarm export: events of alarm kinds as CSV (id,time,kind,source,payload), streamed page by page (spec 4.10).',
  input: Input,
  async handle(input, ctx) {
    const conditions = eventConditions(input, alarmKinds)
    const encoder = new TextEncoder()
    let afterId = 0
    let headerSent = false
    const db = ctx.db
    const signal = ctx.signal
    // Pages are read as the client consumes them (keyset on id): memory stays flat.
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (!headerSent) {
          headerSent = true
          controller.enqueue(encoder.encode(COLUMNS.join(',') + '\r\n'))
          return
        }
        if (signal.aborted) return controller.close()
        const rows = await db.select().from(events).where(whereAll([...conditions, gt(events.id, afterId)])).orderBy(asc(events.id)).limit(PAGE)
        if (rows.length === 0) return controller.close()
        afterId = rows[rows.length - 1]!.id
        const text = rows.map((r) => [String(r.id), new Date(r.time).toISOString(), r.kind, r.source, r.payload].map(cell).join(',')).join('\r\n') + '\r\n'
        controller.enqueue(encoder.encode(text))
      },
    })
    const stamp = new Date(ctx.clock.now()).toISOString().replace(/[:.]/g, '-')
    return new Response(body, {
      status: 200,
      headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="alarms-${stamp}.csv"` },
    })
  },
})
