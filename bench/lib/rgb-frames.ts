import { spawn } from 'node:child_process'
import { ffmpegBinary, parseOutputSize, videoFilter } from '../../runtime/cameras/ffmpeg.ts'

export interface RgbFrame { index: number; width: number; height: number; rgb: Buffer }

/**
 * The frames of a video file as ffmpeg decodes them for a stream task: `fps` frames a second,
 * the longer side at most `maxSide`, packed RGB (the device's own filter, runtime/cameras/ffmpeg.ts).
 * Each frame owns its bytes.
 */
export async function* rgbFrames(video: string, fps: number, maxSide: number): AsyncGenerator<RgbFrame> {
  const child = spawn(ffmpegBinary(''), ['-hide_banner', '-nostats', '-i', video, '-map', '0:v:0', '-an', '-vf', videoFilter(fps, maxSide), '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let size = null as { width: number; height: number } | null
  let messages = ''
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    if (size) return
    messages += text
    for (const line of messages.split('\n')) size ??= parseOutputSize(line)
  })
  let pending = Buffer.alloc(0)
  let index = 0
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    pending = Buffer.concat([pending, chunk])
    if (!size) throw new Error('ffmpeg wrote frames before their size')
    const bytes = size.width * size.height * 3
    while (pending.length >= bytes) {
      const rgb = Buffer.from(pending.subarray(0, bytes))
      pending = pending.subarray(bytes)
      yield { index: index++, width: size.width, height: size.height, rgb }
    }
  }
}
