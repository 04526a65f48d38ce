import { createReadStream } from 'node:fs'
import { rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { Readable } from 'node:stream'
import mime from 'mime-types'
import parseRange from 'range-parser'
import { ApiError } from '../errors/index.ts'
import { failure } from '../envelope.ts'

export interface RangedFileOptions {
  /** Name offered to the client; sanitized. Defaults to the file's own name. */
  downloadName?: string
  /** `attachment` (downloads, exports) or `inline` (static media). Default attachment. */
  disposition?: 'attachment' | 'inline'
  /** Overrides the type derived from the extension of `downloadName`. */
  contentType?: string
  /** Default `no-store`. */
  cacheControl?: string
  /** A scratch file (a produced export): deleted once the response is sent, refused or abandoned. */
  removeWhenDone?: boolean
}

const READ_CHUNK_BYTES = 1024 * 1024

/** Characters kept in the plain `filename=` parameter; everything else becomes `_`. */
const ASCII_SAFE = /[^A-Za-z0-9._ ()+-]/g

/** A file name without folders, control characters or quotes; never empty. */
export function safeFileName(name: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what it removes
  const base = path.posix.basename(name.replaceAll('\\', '/')).replace(/[\u0000-\u001f\u007f"]/g, '').trim()
  return base === '' || base === '.' || base === '..' ? 'download' : base.slice(0, 200)
}

/** RFC 6266 attachment header with an ASCII fallback and the UTF-8 name (RFC 5987). */
export function contentDisposition(kind: 'attachment' | 'inline', name: string): string {
  const safe = safeFileName(name)
  const ascii = safe.replace(ASCII_SAFE, '_')
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(safe)}`
}

/** spec 4.11: static media paths answer the MIME type derived from the extension. */
export const mimeTypeOf = (name: string) => mime.lookup(name) || 'application/octet-stream'

/**
 * Streams a file from disk (never buffered) with single-`Range` support (spec 4.11, 7.1):
 * - no `Range` (or one the server may ignore: malformed, several ranges) → 200, whole file;
 * - one satisfiable range, including a suffix range `bytes=-N` → 206 with `Content-Range`;
 * - an unsatisfiable range → 416 with `Content-Range: bytes *\/size` and the catalogue error.
 * The caller checks that the file may be served; a missing file throws ENOENT from here.
 */
export async function rangedFileResponse(request: Request | null, file: string, options: RangedFileOptions = {}): Promise<Response> {
  const remove = () => (options.removeWhenDone ? rm(file, { force: true }) : Promise.resolve())
  let size: number
  try {
    size = (await stat(file)).size
  } catch (error) {
    await remove()
    throw error
  }
  const name = options.downloadName ?? path.basename(file)
  const headers = new Headers({
    'Accept-Ranges': 'bytes',
    'Content-Type': options.contentType ?? mimeTypeOf(name),
    'Content-Disposition': contentDisposition(options.disposition ?? 'attachment', name),
    'Cache-Control': options.cacheControl ?? 'no-store',
  })
  const header = request?.headers.get('range')
  let start = 0
  let end = size - 1
  let status = 200
  if (header) {
    const ranges = parseRange(size, header, { combine: true })
    if (ranges === -1) {
      // RFC 9110 15.5.17: 416 names the current length.
      const error = new ApiError('RangeNotSatisfiable', { details: { range: header.slice(0, 200), sizeBytes: String(size) } })
      await remove()
      return new Response(JSON.stringify(failure([error.item])), {
        status: 416,
        headers: { 'Content-Type': 'application/json', 'Content-Range': `bytes */${size}`, 'Accept-Ranges': 'bytes' },
      })
    }
    // -2 (malformed) and multi-range requests are served whole, as RFC 9110 14.2 allows.
    if (Array.isArray(ranges) && ranges.type === 'bytes' && ranges.length === 1) {
      start = ranges[0]!.start
      end = ranges[0]!.end
      status = 206
      headers.set('Content-Range', `bytes ${start}-${end}/${size}`)
    }
  }
  headers.set('Content-Length', String(size === 0 ? 0 : end - start + 1))
  if (size === 0 || request?.method === 'HEAD') {
    await remove()
    return new Response(null, { status: size === 0 ? 200 : status, headers })
  }
  const reader = createReadStream(file, { start, end, highWaterMark: READ_CHUNK_BYTES })
  // 'close' follows the end of the stream, an error, and a client that went away (cancel destroys it).
  if (options.removeWhenDone) reader.once('close', () => { void remove() })
  // Large reads: per-chunk costs of the web-stream bridge dominate at the 64 KB default.
  const stream = Readable.toWeb(reader) as ReadableStream<Uint8Array>
  return new Response(stream, { status, headers })
}
