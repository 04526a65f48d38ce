import { execFile, execFileSync } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'

/** The device's own ffmpeg (@ffmpeg-installer), for preparing test media and grabbing frames. */
export const FFMPEG = path.resolve(import.meta.dirname, '../../node_modules/@ffmpeg-installer/linux-x64/ffmpeg')

/** Debian's ffprobe (test/provision.mjs): an independent reading of what the device wrote. */
export function probe(file: string): { durationSeconds: number; frames: number; codec: string; width: number; height: number } {
  const out = JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-count_frames', '-select_streams', 'v:0',
    '-show_entries', 'format=duration:stream=codec_name,width,height,nb_read_frames', '-of', 'json', file], { encoding: 'utf8' }))
  const stream = out.streams[0]
  return { durationSeconds: Number(out.format.duration), frames: Number(stream.nb_read_frames), codec: stream.codec_name, width: stream.width, height: stream.height }
}

/** Key frames of a file or a captured stream (ffprobe, decoding nothing). */
export function keyFrames(file: string): number {
  const out = execFileSync('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-skip_frame', 'nokey', '-show_entries', 'frame=pts_time', '-of', 'csv=p=0', file], { encoding: 'utf8' })
  return out.split('\n').filter((l) => l.trim()).length
}

/** One frame of a video as JPEG: the first one, or the first at or after `seconds`. */
export function frameJpeg(file: string, seconds = 0): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(FFMPEG, ['-hide_banner', '-loglevel', 'error', ...(seconds > 0 ? ['-ss', String(seconds)] : []), '-i', file, '-frames:v', '1', '-f', 'image2', '-c:v', 'mjpeg', 'pipe:1'],
      { encoding: 'buffer', maxBuffer: 16 * 1024 * 1024 }, (error, stdout) => (error ? reject(error) : resolve(stdout)))
  })
}

/**
 * A test source made of pieces of a video, `[from, to)` in seconds, one after another,
 * encoded again as H.264 with a key frame every second (like the footage; a copy cut would
 * keep frames of the next group of pictures at each joint), the whole `repeat` times (copied):
 * the test RTSP server ends its sessions where it loops the file when several clients read it,
 * so a test that needs an unbroken stream uses a file longer than itself.
 */
export function spliceVideo(source: string, pieces: [number, number][], target: string, repeat = 1): void {
  const trims = pieces.map(([from, to], i) => `[0:v]trim=${from}:${to},setpts=PTS-STARTPTS[p${i}]`).join(';')
  const filter = `${trims};${pieces.map((_, i) => `[p${i}]`).join('')}concat=n=${pieces.length}:v=1:a=0[v]`
  const once = repeat > 1 ? `${target}.once.mp4` : target
  execFileSync(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-i', source, '-filter_complex', filter, '-map', '[v]',
    '-c:v', 'libx264', '-preset', 'veryfast', '-profile:v', 'main', '-pix_fmt', 'yuv420p', '-r', '10', '-g', '10', '-keyint_min', '10', '-sc_threshold', '0', '-y', once])
  if (repeat === 1) return
  const list = `${target}.txt`
  writeFileSync(list, `file '${once}'\n`.repeat(repeat))
  try {
    execFileSync(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-f', 'concat', '-safe', '0', '-i', list, '-c', 'copy', '-y', target])
  } finally {
    rmSync(list, { force: true })
    rmSync(once, { force: true })
  }
}
