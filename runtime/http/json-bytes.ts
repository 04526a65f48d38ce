import { randomBytes } from 'node:crypto'
import { DATA_URL_SPLICER, type DataUrl, type Splicer } from '../../shared/http/data-url.ts'

const holder = globalThis as { [DATA_URL_SPLICER]?: Splicer | null }

/** Stands for a DataUrl in the text of `jsonBytes`; random, so no client string can forge it. */
const MARK = `splice-${randomBytes(16).toString('hex')}-`

/** `JSON.stringify(value)` as UTF-8 bytes, with every DataUrl spliced in as bytes. */
export function jsonBytes(value: unknown): Buffer<ArrayBuffer> {
  const dataUrls: DataUrl[] = []
  holder[DATA_URL_SPLICER] = (dataUrl) => `${MARK}${dataUrls.push(dataUrl) - 1}`
  let text: string
  try {
    text = JSON.stringify(value)
  } finally {
    holder[DATA_URL_SPLICER] = null
  }
  if (dataUrls.length === 0) return Buffer.from(text)
  // Written straight into one buffer of the answer's size: no intermediate buffers to collect.
  const pieces: [string, BufferEncoding][] = []
  let from = 0
  dataUrls.forEach((dataUrl, index) => {
    const mark = `"${MARK}${index}"`
    const at = text.indexOf(mark, from)
    pieces.push([text.slice(from, at), 'utf8'], [`"data:${dataUrl.mediaType};base64,`, 'latin1'], [dataUrl.bytes.toString('base64'), 'latin1'], ['"', 'latin1'])
    from = at + mark.length
  })
  pieces.push([text.slice(from), 'utf8'])
  const bytes = Buffer.allocUnsafe(pieces.reduce((size, [piece, encoding]) => size + Buffer.byteLength(piece, encoding), 0))
  let offset = 0
  for (const [piece, encoding] of pieces) offset += bytes.write(piece, offset, encoding)
  return bytes
}
