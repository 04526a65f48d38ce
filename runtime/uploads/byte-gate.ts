import { Transform, type Readable, type TransformCallback } from 'node:stream'
import { ApiError } from '../../shared/errors/index.ts'
import { UPLOAD_STREAM_BUFFER_BYTES } from './stream-buffer.ts'

/**
 * Passes a chunk's bytes from the request to the store while counting them.
 *
 * - Bytes beyond `declaredBytes` are counted but not passed on, so a chunk that lies about
 *   its size never writes past its place in the file.
 * - Beyond `limitBytes` (maxChunkSize) it stops at once: UPLOAD_CHUNK_TOO_LARGE while
 *   streaming, without reading the rest (spec 8 "Upload chunk").
 * - A failure of the source (client gone, hostile multipart) or `abort()` also stops it.
 *
 * It never emits 'error': it records `failure` and ends cleanly, so that the store's write
 * pipeline always finishes flushing and closing its file before the caller truncates the
 * partial chunk away.
 */
export class ByteGate extends Transform {
  received = 0
  failure: unknown = null

  constructor(private readonly source: Readable, private readonly declaredBytes: number, private readonly limitBytes: number,
    private readonly context: Record<string, unknown> = {}) {
    super({ highWaterMark: UPLOAD_STREAM_BUFFER_BYTES })
    // The source may have failed before the gate was attached (the request was already parsed).
    if (source.errored || source.destroyed) {
      this.stop(source.errored ?? new Error('the request body was closed before the chunk was read'))
      return
    }
    source.once('error', (error) => this.stop(error))
    source.pipe(this)
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.failure) return callback()
    const before = this.received
    this.received += chunk.length
    if (this.received > this.limitBytes) {
      this.stop(new ApiError('UPLOAD_CHUNK_TOO_LARGE', {
        details: { actualBytes: this.received, limitBytes: this.limitBytes, resource: 'upload-chunk', ...this.context },
        msgText: `The chunk is larger than maxChunkSize (${this.limitBytes} bytes); rejected after ${this.received} bytes.`,
      }))
      return callback()
    }
    if (before >= this.declaredBytes) return callback()
    callback(null, this.received > this.declaredBytes ? chunk.subarray(0, this.declaredBytes - before) : chunk)
  }

  /** Stops passing bytes and ends the output; the first reason wins. */
  stop(reason: unknown): void {
    if (this.failure) return
    this.failure = reason
    this.source.unpipe(this)
    this.source.resume() // let the rest of the request drain so the client gets its answer
    this.end()
  }
}
