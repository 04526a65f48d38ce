import { failure } from '../failure.ts'
import type { Reader } from '../reader.ts'
import { urlFields } from './fields.ts'
import { httpContentType } from './http-reader.ts'
import { httpSnapshot } from './http-snapshot.ts'
import { mjpeg } from './mjpeg.ts'
import type { CameraSource, FfmpegInput, OpenContext } from './types.ts'

/** One kind of HTTP source, chosen by the content type the URL answers. */
export interface HttpKind {
  answers(contentType: string): boolean
  /** Its ffmpeg input (keyed by its name in `httpKinds`), when ffmpeg reads it. */
  input?: FfmpegInput
  open(context: OpenContext, authorization: string | null): Promise<Reader>
}

/** The HTTP kinds, asked in this order (one file per kind in this folder). */
export const httpKinds: Record<string, HttpKind> = {
  mjpeg,
  snapshot: httpSnapshot,
}

/**
 * `http`: an `http://` or `https://` URL; what it answers picks the kind each time a reader
 * opens (docs/cameras-and-stream-tasks.md "Sources"). No stream to copy.
 */
export const http: CameraSource = {
  fields: (input, stored) => urlFields('http', input, stored),
  open: async (context) => {
    const { row } = context
    const authorization = row.username || row.password ? `Basic ${Buffer.from(`${row.username ?? ''}:${row.password ?? ''}`).toString('base64')}` : null
    const type = await httpContentType(row.url!, authorization, context.timing.connectTimeoutMs)
    const kind = Object.values(httpKinds).find((candidate) => candidate.answers(type))
    if (!kind) throw failure('CameraUnsupportedCodec', `the URL answers ${type}, not a JPEG snapshot or an MJPEG stream`)
    return kind.open(context, authorization)
  },
}
