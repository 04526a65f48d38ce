import path from 'node:path'
import { baseFields, invalid, refuse } from './fields.ts'
import type { CameraSource, OpenContext } from './types.ts'

const video = (context: OpenContext) => ({ sourceType: 'file', input: path.join(context.dataPath, context.row.videoFile!) })

/** `file`: an uploaded video (purpose video) kept under DATA_DIR/cameras, played at its own rate in a loop, like a camera. */
export const file: CameraSource = {
  fields: (input, stored) => {
    if (input.uploadId === undefined && !stored.keepVideo) throw invalid('uploadId', 'a file camera needs the uploadId of a video (purpose video)')
    if (input.url !== undefined) refuse('file', 'url')
    return baseFields(input, stored)
  },
  input: { args: () => ['-protocol_whitelist', 'file', '-re', '-stream_loop', '-1'] },
  open: (context) => Promise.resolve(context.ffmpeg(video(context))),
  copy: (context) => Promise.resolve({ args: context.args(video(context)), password: null }),
  storesVideo: true,
  noFullFrame: "a file camera's readers each play the video from their own start",
}
