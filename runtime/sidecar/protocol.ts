/**
 * The sidecar's wire format over its Unix domain socket: a stream of frames, each
 *
 *   u32 BE  header length H
 *   u32 BE  body length B
 *   H bytes UTF-8 JSON header ({ id, op, ... } or { id, ok, ... })
 *   B bytes binary body (encoded image, raw RGB frame, overlay JPEG; may be empty)
 *
 * Binary data never goes through JSON (no Base64 on this hop). Requests carry an `id`; the
 * answer carries the same `id`, so many requests may be in flight on one connection.
 */
export const MAX_HEADER_BYTES = 4 * 1024 * 1024
export const MAX_BODY_BYTES = 512 * 1024 * 1024

export interface Frame { header: Record<string, unknown>; body: Buffer }

/**
 * `cancel` ({ target: id }) tells a `detect` in flight that its caller went away; `overlay`
 * draws a given result over an image and answers the JPEG.
 */
export type SidecarOp = 'ping' | 'load' | 'release' | 'detect' | 'overlay' | 'cancel' | 'stats' | 'define' | 'forget' | 'inspectModel' | 'describe'

/**
 * The one call the sidecar makes to the runtime, while a `detect` with a `recognizer` node runs:
 * `{ call: 'recognize', id, kind, count, dims, galleryIds }` with the descriptors as float32 in the
 * body; the runtime searches its galleries and answers `{ reply: true, id, ok, result }`
 * (result: the best GalleryMatch or null per descriptor). Calls have their own id sequence.
 */
export const RECOGNIZE_CALL = 'recognize'

/** Float32 vectors of one length, back to back (descriptors travel in frame bodies, not JSON). */
export function packVectors(vectors: Float32Array[]): Buffer {
  const out = Buffer.allocUnsafe(vectors.reduce((n, v) => n + v.byteLength, 0))
  let at = 0
  for (const v of vectors) { Buffer.from(v.buffer, v.byteOffset, v.byteLength).copy(out, at); at += v.byteLength }
  return out
}

export function unpackVectors(body: Buffer, count: number, dims: number): Float32Array[] {
  if (body.length < count * dims * 4) throw new Error(`frame body holds ${body.length} bytes, expected ${count}×${dims} float32`)
  return Array.from({ length: count }, (_, i) => {
    const bytes = body.subarray(i * dims * 4, (i + 1) * dims * 4)
    return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))
  })
}

export interface WireError { errorId: string; message: string; details: Record<string, unknown>; retryAfterSeconds?: number }

export function encodeFrame(header: object, body: Uint8Array = Buffer.alloc(0)): Buffer[] {
  const json = Buffer.from(JSON.stringify(header), 'utf8')
  const prefix = Buffer.allocUnsafe(8)
  prefix.writeUInt32BE(json.length, 0)
  prefix.writeUInt32BE(body.length, 4)
  return [prefix, json, Buffer.from(body.buffer, body.byteOffset, body.byteLength)]
}

/** Incremental decoder: feed socket chunks, get whole frames. Oversized frames are a protocol error. */
export class FrameDecoder {
  #chunks: Buffer[] = []
  #buffered = 0

  push(chunk: Buffer): Frame[] {
    this.#chunks.push(chunk)
    this.#buffered += chunk.length
    const frames: Frame[] = []
    for (;;) {
      if (this.#buffered < 8) break
      const head = this.#peek(8)
      const h = head.readUInt32BE(0), b = head.readUInt32BE(4)
      if (h > MAX_HEADER_BYTES || b > MAX_BODY_BYTES) throw new Error(`frame too large (${h}+${b} bytes)`)
      if (this.#buffered < 8 + h + b) break
      const all = this.#take(8 + h + b)
      frames.push({ header: JSON.parse(all.subarray(8, 8 + h).toString('utf8')) as Record<string, unknown>, body: all.subarray(8 + h) })
    }
    return frames
  }

  #peek(n: number): Buffer {
    if (this.#chunks[0]!.length < n) this.#chunks = [Buffer.concat(this.#chunks)]
    return this.#chunks[0]!.subarray(0, n)
  }

  #take(n: number): Buffer {
    const all = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks)
    const rest = all.subarray(n)
    this.#chunks = rest.length > 0 ? [rest] : []
    this.#buffered = rest.length
    // A frame that is all there is (the usual case for a large answer: its chunks were just
    // concatenated) is handed over as it is; otherwise it is copied, so that a small frame
    // does not keep a large socket chunk alive.
    return rest.length === 0 ? all : Buffer.from(all.subarray(0, n))
  }
}
