import { Readable } from 'node:stream'
import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { EventFilter, PayloadFilter } from '../../shared/events/query.ts'
import { producedFileResponse, scratchDirOf } from '../../shared/http/produced-file.ts'

const Input = Type.Object({
  ...EventFilter,
  ...PayloadFilter,
  format: Type.Optional(Type.Union([Type.Literal('zip'), Type.Literal('csv')], { default: 'zip', description: '`zip`: alarms.csv with a `picture` column and the alarms\' pictures under pictures/; `csv`: the table alone.' })),
}, { additionalProperties: false })

export default defineHandler({
  routes: ['/gtw/cwai/Event/ExportAlarms'],
  auth: 'session',
  body: 'json',
  summary: 'Alarm export (spec 4.10 Event): events of alarm kinds, filtered like EventPage; a zip of alarms.csv (id,time,kind,source,payload,picture) and the alarms\' pictures (default), or the CSV alone (`format: "csv"`, streamed). Single Range supported on the zip (spec 4.11).',
  input: Input,
  async handle(input, ctx) {
    // The filter is checked here (InvalidParam), before the response starts.
    const exported = ctx.events.history.exportAlarms(input, { signal: ctx.signal, picture: (alarmId) => ctx.alarms.picture(alarmId) })
    const stamp = new Date(ctx.clock.now()).toISOString().replace(/[:.]/g, '-')
    if (input.format === 'csv') {
      const body = Readable.toWeb(exported.csv()) as ReadableStream<Uint8Array>
      return new Response(body, {
        status: 200,
        headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="alarms-${stamp}.csv"` },
      })
    }
    return producedFileResponse(ctx.request, scratchDirOf(ctx.config.dataPath), () => exported.zip(), {
      downloadName: `alarms-${stamp}.zip`,
      contentType: 'application/zip',
    })
  },
})
