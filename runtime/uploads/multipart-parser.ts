import { Readable, Writable } from 'node:stream'
import { UPLOAD_STREAM_BUFFER_BYTES } from './stream-buffer.ts'

/**
 * A streaming multipart/form-data parser (RFC 7578) for upload chunks.
 *
 * Why not busboy: on this 2-core device busboy parses at about 190 MB/s (its boundary search
 * runs in JavaScript, byte by byte), below what the disk takes, so an 8 MB chunk spent more
 * time being parsed than written (bench/upload.bench.mjs). This parser finds boundaries with
 * `Buffer.indexOf` (native) and hands file bytes on as zero-copy slices, with backpressure.
 *
 * Events are callbacks: `onField(name, value)` for text parts (values above `fieldSize`
 * bytes fail the parse), `onFile(name, filename, stream)` for parts whose
 * Content-Disposition has a filename. A malformed or truncated body destroys the parser with
 * an error (and the open file stream with it).
 */
export interface MultipartHandlers {
  onField(name: string, value: string): void
  onFile(name: string, filename: string, stream: Readable): void
}

export interface MultipartLimits {
  /** Largest text part, bytes. */
  fieldSize: number
  /** Largest header block of one part, bytes. */
  headerSize: number
  /** Most parts. */
  parts: number
}

export class MultipartError extends Error {}

const CRLF = Buffer.from('\r\n')
const HEADER_END = Buffer.from('\r\n\r\n')

/** Reads `boundary` from a multipart Content-Type, or null. */
export function boundaryOf(contentType: string): string | null {
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType)
  return match ? (match[1] ?? match[2]!) : null
}

/** Parses `form-data; name="x"; filename="y"` (quoted-string escapes and RFC 5987 `filename*`). */
export function parseDisposition(value: string): { name?: string; filename?: string } {
  const params: Record<string, string> = {}
  const pattern = /;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g
  for (let match = pattern.exec(value); match; match = pattern.exec(value)) {
    const key = match[1]!.toLowerCase()
    params[key] = match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : match[3]!.trim()
  }
  let filename = params.filename
  const extended = params['filename*']
  if (extended) {
    const parts = /^([\w-]+)'[^']*'(.*)$/.exec(extended)
    try {
      if (parts) filename = decodeURIComponent(parts[2]!)
    } catch { /* keep the plain filename */ }
  }
  return { name: params.name, filename }
}

type State = 'preamble' | 'afterDelimiter' | 'headers' | 'body' | 'end'

export class MultipartParser extends Writable {
  private readonly delimiter: Buffer
  private pending: Buffer = CRLF // the first boundary has no CRLF before it
  private state: State = 'preamble'
  private parts = 0
  private field: { name: string; chunks: Buffer[]; size: number } | null = null
  private file: Readable | null = null
  /** The write callback held back while the file's reader is not asking for more. */
  private held: ((error?: Error | null) => void) | null = null

  constructor(boundary: string, private readonly handlers: MultipartHandlers, private readonly limits: MultipartLimits) {
    // 1 MB of input may queue while the file's reader catches up (a source piped in need not
    // pause after every 64 KB read).
    super({ highWaterMark: 1024 * 1024 })
    this.delimiter = Buffer.from(`\r\n--${boundary}`)
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    // Inside a part, `pending` is empty unless the last input ended with the start of a
    // delimiter, so part data is (almost) never copied here.
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk])
    this.resume(callback)
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (this.state !== 'end') return callback(new MultipartError('Unexpected end of form'))
    callback()
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.file && !this.file.readableEnded) this.file.destroy(error ?? new MultipartError('Unexpected end of form'))
    callback(error)
  }

  private resume(callback: (error?: Error | null) => void): void {
    try {
      if (this.parse()) callback()
      else this.held = callback // continued from the file stream's read()
    } catch (error) {
      callback(error as Error)
    }
  }

  /** Consumes `pending`; false when it stopped for backpressure. */
  private parse(): boolean {
    for (;;) {
      switch (this.state) {
        case 'end':
          this.pending = Buffer.alloc(0) // epilogue is ignored
          return true
        case 'preamble': {
          const at = this.pending.indexOf(this.delimiter)
          if (at < 0) { this.keepTail(); return true }
          this.pending = this.pending.subarray(at + this.delimiter.length)
          this.state = 'afterDelimiter'
          break
        }
        case 'afterDelimiter': {
          if (this.pending.length < 2) return true
          if (this.pending[0] === 0x2d && this.pending[1] === 0x2d) { this.state = 'end'; break }
          const lineEnd = this.pending.indexOf(CRLF)
          if (lineEnd < 0) {
            if (this.pending.length > 256) throw new MultipartError('Malformed part boundary')
            return true
          }
          if (this.pending.subarray(0, lineEnd).toString('latin1').trim() !== '') throw new MultipartError('Malformed part boundary')
          this.pending = this.pending.subarray(lineEnd + 2)
          this.state = 'headers'
          break
        }
        case 'headers': {
          const at = this.pending.indexOf(HEADER_END)
          if (at < 0) {
            if (this.pending.length > this.limits.headerSize) throw new MultipartError('Part headers too large')
            return true
          }
          this.startPart(this.pending.subarray(0, at).toString('utf8'))
          this.pending = this.pending.subarray(at + HEADER_END.length)
          this.state = 'body'
          break
        }
        case 'body': {
          const at = this.pending.indexOf(this.delimiter)
          if (at < 0) {
            // Hand everything on but a tail that may be the start of a delimiter. Keeping back
            // a fixed delimiter-length tail instead would make every next input a concat: one
            // more copy of the whole upload (and as much garbage).
            const safe = this.pending.length - this.delimiterStartAtEnd()
            if (safe <= 0) return true
            const data = this.pending.subarray(0, safe)
            this.pending = this.pending.subarray(safe)
            return this.emit_(data)
          }
          const data = this.pending.subarray(0, at)
          this.pending = this.pending.subarray(at + this.delimiter.length)
          this.state = 'afterDelimiter'
          // The part ends here: its last bytes are buffered in the file stream whatever its
          // backpressure (an ended stream asks for nothing more, so we must not wait for it).
          if (data.length > 0) this.emit_(data)
          this.endPart()
          break
        }
      }
    }
  }

  /** Length of the longest end of `pending` that is a proper prefix of the delimiter (0 mostly). */
  private delimiterStartAtEnd(): number {
    const { pending, delimiter } = this
    const from = Math.max(0, pending.length - (delimiter.length - 1))
    // The delimiter starts with CR: only a CR near the end can begin one.
    for (let at = pending.indexOf(0x0d, from); at >= 0; at = pending.indexOf(0x0d, at + 1))
      if (delimiter.compare(pending, at, pending.length, 0, pending.length - at) === 0) return pending.length - at
    return 0
  }

  private keepTail(): void {
    const keep = this.delimiter.length - 1
    if (this.pending.length > keep) this.pending = this.pending.subarray(this.pending.length - keep)
  }

  private startPart(headerBlock: string): void {
    if (++this.parts > this.limits.parts) throw new MultipartError('Too many parts')
    const disposition = headerBlock.split('\r\n').find((line) => /^content-disposition\s*:/i.test(line))
    const { name, filename } = parseDisposition(disposition ? disposition.slice(disposition.indexOf(':') + 1) : '')
    if (name === undefined) throw new MultipartError('Part without a name')
    if (filename === undefined) {
      this.field = { name, chunks: [], size: 0 }
      return
    }
    const file = new Readable({
      highWaterMark: UPLOAD_STREAM_BUFFER_BYTES,
      read: () => {
        const callback = this.held
        if (!callback) return
        this.held = null
        this.resume(callback)
      },
    })
    this.file = file
    this.handlers.onFile(name, filename, file)
  }

  /** Hands part data on; false when the file's reader wants no more for now. */
  private emit_(data: Buffer): boolean {
    if (this.field) {
      this.field.size += data.length
      if (this.field.size > this.limits.fieldSize) throw new MultipartError(`Part ${this.field.name} is too long`)
      this.field.chunks.push(data)
      return true
    }
    return this.file ? this.file.push(data) : true
  }

  private endPart(): void {
    if (this.field) this.handlers.onField(this.field.name, Buffer.concat(this.field.chunks).toString('utf8'))
    this.field = null
    this.file?.push(null)
    this.file = null
  }
}
