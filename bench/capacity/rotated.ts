import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { promisify } from 'node:util'

const run = promisify(execFile)

/**
 * A copy of `video` (H.264 mp4) that starts `offsetSeconds` into it and ends where it began,
 * cut without re-encoding (ffmpeg's concat demuxer, stream copy): served in a loop, it is the
 * same footage from another point. The cut lands on a keyframe when `offsetSeconds` does.
 */
export async function rotatedCopy(ffmpeg: string, video: string, offsetSeconds: number, out: string): Promise<void> {
  const list = `${out}.txt`
  const quoted = `'${video.replaceAll("'", "'\\''")}'`
  await writeFile(list, `file ${quoted}\ninpoint ${offsetSeconds}\nfile ${quoted}\noutpoint ${offsetSeconds}\n`)
  await run(ffmpeg, ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'concat', '-safe', '0', '-i', list, '-map', '0:v:0', '-c', 'copy', out])
}
