import { ApiError } from '../../shared/errors/index.ts'

/**
 * The manifest of a face-import archive (docs/galleries.md "File import"): `manifest.csv` (a header row
 * naming `personId`, `name`, `file`; other columns become string attributes) or
 * `manifest.json` (an array of `{personId, name, file, attributes?}`), at the archive root.
 */
export interface ImportRow {
  /** 1-based position in the manifest (the CSV header is row 0). */
  row: number
  personId: string
  name: string
  file: string
  attributes: Record<string, unknown>
}

export const MANIFEST_FILES = ['manifest.csv', 'manifest.json'] as const

const invalid = (reason: string) => new ApiError('FaceImportManifestInvalid', { details: { reason } })

export function parseManifest(kind: (typeof MANIFEST_FILES)[number], text: string): ImportRow[] {
  return kind === 'manifest.json' ? fromJson(text) : fromCsv(text)
}

function fromJson(text: string): ImportRow[] {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw invalid(`manifest.json is not JSON: ${(error as Error).message}`)
  }
  if (!Array.isArray(value)) throw invalid('manifest.json must be an array of {personId, name, file, attributes?}')
  return value.map((item, i) => {
    const o = (item ?? {}) as Record<string, unknown>
    const attributes = typeof o.attributes === 'object' && o.attributes !== null && !Array.isArray(o.attributes) ? o.attributes as Record<string, unknown> : {}
    return { row: i + 1, personId: String(o.personId ?? ''), name: String(o.name ?? ''), file: String(o.file ?? ''), attributes }
  })
}

function fromCsv(text: string): ImportRow[] {
  const [header, ...records] = csvRecords(text.replace(/^\uFEFF/, '')).filter((r) => r.some((cell) => cell.trim() !== ''))
  if (!header) throw invalid('manifest.csv is empty')
  const columns = header.map((h) => h.trim())
  for (const required of ['personId', 'name', 'file'])
    if (!columns.includes(required)) throw invalid(`manifest.csv has no ${required} column`)
  return records.map((cells, i) => {
    const byName = Object.fromEntries(columns.map((c, j) => [c, cells[j] ?? '']))
    const { personId, name, file, ...attributes } = byName
    return { row: i + 1, personId: personId!.trim(), name: name!.trim(), file: file!.trim(), attributes }
  })
}

/** RFC 4180 records: fields separated by commas, quoted fields with doubled quotes, CRLF or LF. */
function csvRecords(text: string): string[][] {
  const records: string[][] = []
  let record: string[] = []
  let field = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"'
        i++
      } else if (c === '"') quoted = false
      else field += c
    } else if (c === '"' && field === '') quoted = true
    else if (c === ',') {
      record.push(field)
      field = ''
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++
      record.push(field); records.push(record); record = []; field = ''
    } else field += c
  }
  if (quoted) throw invalid('manifest.csv has an unterminated quoted field')
  if (field !== '' || record.length > 0) { record.push(field); records.push(record) }
  return records
}
