import { Readable } from 'node:stream'
import yazl from 'yazl'
import type { AlarmExport, StoredEvent } from '../../shared/events/types.ts'

const PAGE = 500
const COLUMNS = ['id', 'time', 'kind', 'source', 'payload']

/** The events to export, oldest first, read in pages after an id (keyset). */
export interface EventReader {
  after(afterId: number, limit: number): Promise<StoredEvent[]>
}

/** RFC 4180 quoting; a leading formula character is neutralised for spreadsheet safety. */
const cell = (value: string) => {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe
}

/**
 * The table, page by page as it is read (keyset on id), so memory stays flat. `picture` (zip)
 * names each row's picture in the archive and collects the files to add after the table.
 */
async function* table(reader: EventReader, signal: AbortSignal, picture?: (payload: Record<string, unknown>, id: number) => Promise<string>) {
  yield Buffer.from([...COLUMNS, ...(picture ? ['picture'] : [])].join(',') + '\r\n')
  for (let afterId = 0; !signal.aborted;) {
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
function zip(reader: EventReader, signal: AbortSignal, pictureOf: (alarmId: string) => Promise<string>): Readable {
  const archive = new yazl.ZipFile()
  const pictures: [string, string][] = []
  const csv = Readable.from(table(reader, signal, async (payload, id) => {
    const file = typeof payload.alarmId === 'string' ? await pictureOf(payload.alarmId).catch(() => null) : null
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

/** The alarm export of ExportAlarms (spec 4.10 Event) over an events reader (history.ts). */
export function alarmExport(reader: EventReader, options: { signal: AbortSignal; picture(alarmId: string): Promise<string> }): AlarmExport {
  return {
    csv: () => Readable.from(table(reader, options.signal)),
    zip: () => zip(reader, options.signal, options.picture),
  }
}
