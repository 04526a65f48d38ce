import { randomBytes } from 'node:crypto'
import { createReadStream, createWriteStream, mkdirSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import path from 'node:path'
import { PassThrough, Readable } from 'node:stream'
import { finished, pipeline } from 'node:stream/promises'
import { ApiError } from '../../shared/errors/index.ts'
import { nodeBodyOf } from '../http/node-body.ts'
import type { ChunkFields } from '../../shared/uploads/types.ts'
import { ByteGate } from './byte-gate.ts'
import { boundaryOf, MultipartParser } from './multipart-parser.ts'
import { SPOOL_FILE_PREFIX } from './spool.ts'
import { UPLOAD_STREAM_BUFFER_BYTES } from './stream-buffer.ts'

/**
 * Streams one `uploadTemp` multipart request (spec 4.5) into `accept(fields, body)`.
 *
 * Part order. The file part may come before or after the fields:
 * - When every required field (purpose, chunkIndex, totalChunks, totalSize, chunkSize, and
 *   uploadId for chunks after 0) precedes the file part, the file is streamed straight to
 *   the store. The body handed to `accept` ends only once the whole request is parsed; a
 *   field that arrives after the file part in this case is rejected (InvalidParam naming
 *   it) and the chunk is rolled back, since it was validated without it.
 * - When the file part comes before the fields it needs, it is spooled into a temporary file
 *   under `spoolDir`, bounded by maxChunkSize (larger → UPLOAD_CHUNK_TOO_LARGE while
 *   streaming), and handed to `accept` once all fields are known. The spool file is deleted
 *   afterwards in every case.
 *
 * Whatever fails, the rest of the request is drained before the promise settles, so the
 * client always gets its answer.
 */
export interface ReceiveChunkOptions {
  maxChunkBytes: number
  spoolDir: string
}

const REQUIRED = ['purpose', 'chunkIndex', 'totalChunks', 'totalSize', 'chunkSize'] as const
const OPTIONAL = ['clientRequestId', 'uploadId', 'sha256'] as const
const KNOWN = new Set<string>([...REQUIRED, ...OPTIONAL])
const INTEGER_FIELDS = new Set(['chunkIndex', 'totalChunks', 'totalSize', 'chunkSize'])

const invalid = (field: string, reason: string) => new ApiError('InvalidParam', {
  details: { field, reason }, msgText: `Invalid part ${field}: ${reason}`, recommendedAction: 'CHECK_UPLOAD_PARAMETERS',
})

/** Parses the collected text parts into ChunkFields; InvalidParam names the first bad part. */
export function parseChunkFields(values: Map<string, string>, filename: string): ChunkFields {
  const out: Record<string, unknown> = { filename }
  for (const field of REQUIRED) {
    const raw = values.get(field)
    if (raw === undefined || raw === '') throw invalid(field, 'missing')
    if (INTEGER_FIELDS.has(field)) {
      if (!/^\d{1,16}$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw invalid(field, `must be a non-negative integer, got ${JSON.stringify(raw.slice(0, 32))}`)
      out[field] = Number(raw)
    } else out[field] = raw
  }
  for (const field of OPTIONAL) {
    const raw = values.get(field)
    if (raw !== undefined && raw !== '') out[field] = field === 'sha256' ? raw.toLowerCase() : raw
  }
  return out as unknown as ChunkFields
}

const fieldsReady = (values: Map<string, string>) =>
  REQUIRED.every((field) => (values.get(field) ?? '') !== '') &&
  (values.get('chunkIndex') === '0' || (values.get('uploadId') ?? '') !== '')

/** Resolves on 'drain' or 'close', removing both listeners either way (no leak per wait). */
const drained = (stream: NodeJS.EventEmitter) => new Promise<void>((resolve) => {
  const done = () => {
    stream.off('drain', done)
    stream.off('close', done)
    resolve()
  }
  stream.on('drain', done)
  stream.on('close', done)
})

/**
 * Feeds a Node body (runtime/http/node-body.ts) to the parser: plain `pipe`, no copies. After a
 * parse failure the rest is still read (and dropped) so the client gets its answer; the
 * runtime's body limit bounds that. Resolves when the body ended or failed.
 */
function pipeNode(source: Readable, parser: MultipartParser, fail: (error: unknown) => void): Promise<void> {
  return new Promise((resolve) => {
    if (source.destroyed || source.readableEnded) {
      const error = source.errored ?? new Error('the request body was already read')
      fail(error)
      parser.destroy(error)
      return resolve()
    }
    parser.once('error', () => {
      source.unpipe(parser)
      source.resume()
    })
    finished(source).then(() => resolve(), (error: unknown) => {
      fail(error)
      parser.destroy(error as Error)
      resolve()
    })
    source.pipe(parser)
  })
}

/**
 * Feeds a web body to the parser with its reader, with backpressure: about twice as fast as
 * Readable.fromWeb on this device (bench/upload.bench.mjs).
 */
async function pumpWeb(body: ReadableStream<Uint8Array>, parser: MultipartParser, fail: (error: unknown) => void): Promise<void> {
  const reader = body.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (parser.destroyed) continue // keep draining so the client gets its answer
      if (!parser.write(Buffer.from(value.buffer, value.byteOffset, value.byteLength))) await drained(parser)
    }
    if (!parser.destroyed) parser.end()
  } catch (error) {
    fail(error)
    parser.destroy(error as Error)
  }
}

export async function receiveChunk<T>(request: Request, options: ReceiveChunkOptions,
  accept: (fields: ChunkFields, body: Readable) => Promise<T>): Promise<T> {
  const contentType = request.headers.get('content-type') ?? ''
  if (!/^multipart\/form-data/i.test(contentType) || !request.body)
    throw new ApiError('UnsupportedMediaType', { details: { expected: 'multipart/form-data', actual: contentType } })

  const values = new Map<string, string>()
  let failure: unknown = null
  let fileSeen = false
  let filename = ''
  let direct: { body: PassThrough; result: Promise<T>; drained: Promise<unknown> } | null = null
  let spool: { file: string; gate: ByteGate; written: Promise<void> } | null = null
  const fail = (error: unknown) => {
    failure ??= error
    direct?.body.destroy(error as Error)
  }

  const boundary = boundaryOf(contentType)
  if (!boundary) throw invalid('file', 'multipart Content-Type without a boundary')
  const onField = (name: string, value: string) => {
    if (name === 'file') return fail(invalid('file', 'must be a file part (with a filename), not a text field'))
    if (!KNOWN.has(name)) return // unknown parts are ignored, as a form may carry extra inputs
    if (values.has(name)) return fail(invalid(name, 'sent more than once'))
    if (direct) return fail(invalid(name, 'arrived after the file part; send every field before the file part, or the file part first'))
    values.set(name, value)
  }
  const onFile = (name: string, partFilename: string, stream: Readable) => {
    // The parser errors the open file stream too when the body is malformed or cut short.
    stream.on('error', (error) => fail(invalid('file', `malformed multipart body: ${error.message}`)))
    if (name !== 'file') {
      stream.resume()
      return fail(invalid(name, 'unexpected file part; the chunk goes in the part named "file"'))
    }
    if (fileSeen) {
      stream.resume()
      return fail(invalid('file', 'only one file part is allowed'))
    }
    fileSeen = true
    filename = partFilename
    if (failure) return void stream.resume()
    if (fieldsReady(values)) {
      let fields: ChunkFields
      try {
        fields = parseChunkFields(values, filename)
      } catch (error) {
        stream.resume()
        return fail(error)
      }
      const body = new PassThrough({ highWaterMark: UPLOAD_STREAM_BUFFER_BYTES })
      body.on('error', () => undefined) // the reader (ByteGate) learns of it through `errored`
      // If the reader gives up (body destroyed), keep draining the part so the parse goes on.
      body.once('close', () => { stream.unpipe(body); stream.resume() })
      stream.pipe(body, { end: false }) // ends when the whole request is parsed (below)
      // Every byte of the part must be in `body` before it ends: wait for the part's own end.
      const drainedPart = finished(stream).catch(() => undefined)
      direct = { body, result: accept(fields, body), drained: drainedPart }
      direct.result.catch(() => undefined)
      return
    }
    mkdirSync(options.spoolDir, { recursive: true })
    const file = path.join(options.spoolDir, `${SPOOL_FILE_PREFIX}${randomBytes(12).toString('hex')}`)
    const gate = new ByteGate(stream, options.maxChunkBytes, options.maxChunkBytes)
    spool = { file, gate, written: pipeline(gate, createWriteStream(file)) }
  }
  const parser = new MultipartParser(boundary, { onField, onFile }, { fieldSize: 4096, headerSize: 16 * 1024, parts: 33 })

  const parsed = new Promise<void>((resolve) => {
    parser.once('close', resolve)
    parser.once('error', (error) => fail(invalid('file', `malformed multipart body: ${error.message}`)))
  })
  const source = nodeBodyOf(request)
  const pump = source ? pipeNode(source, parser, fail) : pumpWeb(request.body as ReadableStream<Uint8Array>, parser, fail)
  await parsed
  await pump

  if (direct) {
    const { body, result, drained: drainedPart } = direct as { body: PassThrough; result: Promise<T>; drained: Promise<unknown> }
    await drainedPart
    if (!failure) body.end()
    return result
  }
  const spooled = spool as { file: string; gate: ByteGate; written: Promise<void> } | null
  try {
    if (spooled) {
      await spooled.written.catch((error) => fail(error))
      if (spooled.gate.failure) fail(spooled.gate.failure)
    }
    if (failure) throw failure
    if (!fileSeen || !spooled) throw invalid('file', 'missing')
    const fields = parseChunkFields(values, filename)
    return await accept(fields, createReadStream(spooled.file))
  } finally {
    if (spooled) await rm(spooled.file, { force: true })
  }
}
