import { SnapshotReader } from './http-reader.ts'
import type { HttpKind } from './http.ts'

/** An HTTP JPEG snapshot URL, polled at the reader's rate (ffmpeg cannot re-read one URL as a stream). */
export const httpSnapshot: HttpKind = {
  answers: (contentType) => /^image\//i.test(contentType) || contentType === '' || /octet-stream/i.test(contentType),
  open: (context, authorization) => Promise.resolve(new SnapshotReader(context.row.url!, authorization, { ...context.timing, maxBytes: context.maxBytes }, context.handlers)),
}
