import { Readable } from 'node:stream'
import { Type } from '@sinclair/typebox'
import yazl from 'yazl'
import { defineHandler, type Ctx } from '../../shared/handler.ts'
import { alarmKinds } from '../../shared/events/kinds.ts'
import { EventFilter, PayloadFilter } from '../../shared/events/query.ts'
import { producedFileResponse, scratchDirOf } from '../../shared/http/produced-file.ts'
import type { EventHistory } from '../../shared/events/types.ts'

const Input = Type.Object({
  ...EventFilter,
  ...PayloadFilter,
  format: Type.Optional(Type.Union([Type.Literal('zip'), Type.Literal('csv')], { default: 'zip', description: '`zip`: alarms.csv with a `picture` column and the alarms\' pictures under pictures/; `csv`: the table alone.' })),
}, { additionalProperties: false })

const PAGE = 500

type AlarmReader = ReturnType<EventHistory['reader']>
const COLUMNS = ['id', 'time', 'kind', 'source', 'payload']

/** RFC 4180 quoting; a leading formula character is neutralised for spreadsheet safety. */
const cell = (value: string) => {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe
}

/**
 * The table, page by page as it is read (keyset on id), so memory stays flat. `picture` (zip)
 * names each row's picture in the archive and collects the files to add after the table.
 */
async function* table(ctx: Ctx, reader: AlarmReader, picture?: (payload: Record<string, unknown>, id: number) => Promise<string>) {
  yield Buffer.from([...COLUMNS, ...(picture ? ['picture'] : [])].join(',') + '\r\n')
  for (let afterId = 0; !ctx.signal.aborted;) {
    const rows = await reader.after(afterId, PAGE)
    if (rows.length === 0) return
    afterId = rows[rows.length - 1]!.id
    const lines: string[] = []
    for (const r of rows) {
      const cells = [String(r.id), new Date(r.time).toISOString(), r.kind, r.source, r.payload]
      if (picture) cells.push(await picture(JSON.parse(r.payload), r.id))
      lines.push(cells.map(cell).join(','))
    }
    yield Buffer.from(lines.join('\r\n') + '\r\n')
  }
}

/** alarms.csv, then pictures/<event id>.jpg for each alarm whose picture is kept. */
function zip(ctx: Ctx, reader: AlarmReader): Readable {
  const archive = new yazl.ZipFile()
  const pictures: [string, string][] = []
  const csv = Readable.from(table(ctx, reader, async (payload, id) => {
    const file = typeof payload.alarmId === 'string' ? await ctx.alarms.picture(payload.alarmId).catch(() => null) : null
    if (!file) return ''
    pictures.push([file, `pictures/${id}.jpg`])
    return `pictures/${id}.jpg`
  }))
  archive.addReadStream(csv, 'alarms.csv')
  csv.once('end', () => {
    // JPEGs hardly compress.
    for (const [file, name] of pictures) archive.addFile(file, name, { compress: false })
    archive.end()
  })
  csv.once('error', (error) => archive.outputStream.emit('error', error))
  return archive.outputStream as Readable
}

export default defineHandler({
  routes: ['/gtw/cwai/Event/ExportAlarms'],
  auth: 'session',
  body: 'json',
  summary: 'Alarm export (spec 4.10 Event): events of alarm kinds, filtered like EventPage; a zip of alarms.csv (id,time,kind,source,payload,picture) and the alarms\' pictures (default), or the CSV alone (`format: "csv"`, streamed). Single Range supported on the zip (spec 4.11).',
  input: Input,
  async handle(input, ctx) {
    // The filter is checked here (InvalidParam), before the response starts.
    const reader = ctx.events.history.reader(input, alarmKinds)
    const stamp = new Date(ctx.clock.now()).toISOString().replace(/[:.]/g, '-')
    if (input.format === 'csv') {
      const body = Readable.toWeb(Readable.from(table(ctx, reader))) as ReadableStream<Uint8Array>
      return new Response(body, {
        status: 200,
        headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="alarms-${stamp}.csv"` },
      })
    }
    return producedFileResponse(ctx.request, scratchDirOf(ctx.config.dataPath), () => zip(ctx, reader), {
      downloadName: `alarms-${stamp}.zip`,
      contentType: 'application/zip',
    })
  },
})
