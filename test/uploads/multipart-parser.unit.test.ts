import { createHash, randomBytes } from 'node:crypto'
import type { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { MultipartParser } from '../../runtime/uploads/multipart-parser.ts'

const BOUNDARY = 'xYz0123boundary'
const DELIMITER = `\r\n--${BOUNDARY}`
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')

/** Random bytes that cannot complete a delimiter prefix standing before them (no CR, '-' or boundary byte first). */
function filler(length: number): Buffer {
  const bytes = randomBytes(length)
  bytes[0] = 0x00
  return bytes
}

/**
 * File bytes that are hostile to a boundary search: pieces of the delimiter (every prefix of
 * it, and the whole of it but the last byte) between random bytes, and never the delimiter
 * itself (random bytes right after a prefix could otherwise complete it, once a few hundred runs).
 */
function hostileData(): Buffer {
  const pieces: Buffer[] = [filler(300)]
  for (let length = 1; length < DELIMITER.length; length++) pieces.push(Buffer.from(DELIMITER.slice(0, length)), filler(37))
  pieces.push(Buffer.from(`\r\n--${BOUNDARY.slice(0, -1)}X`), filler(500))
  const data = Buffer.concat(pieces)
  if (data.includes(DELIMITER)) throw new Error('hostile test data must not contain the delimiter')
  return data
}

function body(fields: Record<string, string>, data: Buffer): Buffer {
  const head = Object.entries(fields).map(([name, value]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('')
  return Buffer.concat([
    Buffer.from(`${head}--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="f.bin"\r\n\r\n`),
    data, Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ])
}

/** Writes `input` in pieces (sizes cycle through `sizes`), reading the file part slowly or at once. */
async function parse(input: Buffer, sizes: number[], slowReader = false) {
  const fields: Record<string, string> = {}
  const file: Buffer[] = []
  let fileDone: Promise<void> = Promise.resolve()
  const parser = new MultipartParser(BOUNDARY, {
    onField: (name, value) => { fields[name] = value },
    onFile: (_name, _filename, stream: Readable) => {
      fileDone = (async () => {
        for await (const piece of stream) {
          file.push(piece as Buffer)
          if (slowReader) await new Promise((resolve) => setImmediate(resolve))
        }
      })()
      fileDone.catch(() => undefined) // a failed parse rejects `closed` first
    },
  }, { fieldSize: 4096, headerSize: 16 * 1024, parts: 10 })
  const closed = new Promise<void>((resolve, reject) => {
    parser.once('close', resolve)
    parser.once('error', reject)
  })
  closed.catch(() => undefined) // awaited below; a parse error must not count as unhandled meanwhile
  for (let at = 0, i = 0; at < input.length; i++) {
    const size = sizes[i % sizes.length]!
    // A parse error ends the writes at once (no 'drain' would come).
    if (!parser.write(input.subarray(at, at + size))) await Promise.race([new Promise((resolve) => parser.once('drain', resolve)), closed])
    at += size
  }
  parser.end()
  await closed
  await fileDone
  return { fields, file: Buffer.concat(file) }
}

describe('MultipartParser: the delimiter split across writes (no copy of the part data)', () => {
  const data = hostileData()
  const input = body({ purpose: 'model', chunkIndex: '0' }, data)
  const dataStart = input.indexOf(data)
  const dataEnd = dataStart + data.length

  it('gives the exact file bytes and fields whichever write boundary falls inside the closing delimiter or the data', async () => {
    // A write that ends at every offset around the end of the data, and inside the hostile pieces.
    const cuts = [...Array.from({ length: DELIMITER.length + 6 }, (_, k) => dataEnd - 3 + k), ...Array.from({ length: 300 }, (_, k) => dataStart + 290 + k * 3)]
    for (const cut of cuts) {
      const { fields, file } = await parse(input, [cut, input.length])
      expect({ cut, fields }).toEqual({ cut, fields: { purpose: 'model', chunkIndex: '0' } })
      expect({ cut, hash: sha256(file) }).toEqual({ cut, hash: sha256(data) })
    }
  })

  it('gives the exact bytes for small and odd write sizes, with a slow reader (backpressure)', async () => {
    for (const sizes of [[1], [7], [DELIMITER.length - 1], [DELIMITER.length], [DELIMITER.length + 1], [64, 3, 1000], [65536]]) {
      for (const slowReader of [false, true]) {
        const { fields, file } = await parse(input, sizes, slowReader)
        expect(fields).toEqual({ purpose: 'model', chunkIndex: '0' })
        expect({ sizes, slowReader, hash: sha256(file) }).toEqual({ sizes, slowReader, hash: sha256(data) })
      }
    }
  })

  it('still fails a body cut short inside the file part', async () => {
    await expect(parse(input.subarray(0, dataEnd + 4), [100])).rejects.toThrow('Unexpected end of form')
  })
})
