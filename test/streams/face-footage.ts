import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { FFMPEG, PERSON_VIDEO } from '../helpers/video.ts'

/** Face pictures are this tall in the footage. */
export const FACE_HEIGHT = 180

/** One face crossing the picture left to right (80 px/s from x = 40) at height `y`, on screen between the seconds `onScreen`. */
export interface FaceLane { name: string; png: Buffer; y: number; onScreen: readonly [number, number] }

/**
 * Test footage for recognition in stream tasks: the empty room of the person video of
 * ../shared/media with face pictures overlaid (ffmpeg's overlay filter), 10 fps, `seconds` long
 * (the RTSP server loops it). Answers the mp4's path in `dir`.
 */
export function makeFaceFootage(dir: string, lanes: readonly FaceLane[], seconds: number): string {
  const background = path.join(dir, 'room.png')
  execFileSync(FFMPEG, ['-v', 'error', '-ss', '1', '-i', PERSON_VIDEO, '-frames:v', '1', '-y', background])
  const inputs = lanes.flatMap((lane) => {
    writeFileSync(path.join(dir, `${lane.name}.png`), lane.png)
    return ['-loop', '1', '-framerate', '10', '-i', path.join(dir, `${lane.name}.png`)]
  })
  const scaled = lanes.map((lane, i) => `[${i + 1}]scale=-2:${FACE_HEIGHT}[${lane.name}]`)
  const overlays = lanes.map((lane, i) => {
    const [from, to] = lane.onScreen
    return `[${i === 0 ? '0' : `v${i}`}][${lane.name}]overlay=x='40+(t-${from})*80':y=${lane.y}:enable='between(t,${from},${to})'[v${i + 1}]`
  })
  const file = path.join(dir, 'faces.mp4')
  execFileSync(FFMPEG, [
    '-v', 'error', '-loop', '1', '-framerate', '10', '-i', background, ...inputs,
    '-filter_complex', [...scaled, ...overlays].join(';'),
    '-map', `[v${lanes.length}]`, '-t', String(seconds), '-r', '10', '-c:v', 'libx264', '-preset', 'veryfast', '-g', '10', '-pix_fmt', 'yuv420p', '-y', file,
  ])
  return file
}
