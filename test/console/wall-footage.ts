import { execFileSync } from 'node:child_process'
import path from 'node:path'
import sharp from 'sharp'
import { FFMPEG, PERSON_VIDEO } from '../helpers/video.ts'

/** The footage's geometry: what the test knows of every frame without asking the device. */
export const WALL_FOOTAGE = {
  width: 768,
  height: 432,
  fps: 5,
  /** The person moves this many pixels per second, left to right, then back (a 10 s loop). */
  speed: 120,
  /** Leftmost x of the person picture; the rightmost is `left + speed * 5`. */
  left: 20,
  personTop: 60,
  personHeight: 340,
  /** The marker bar: as wide as the person picture, directly above it, pure magenta. */
  markerTop: 30,
  markerHeight: 14,
} as const

/** Longer than the test file runs. */
const FOOTAGE_SECONDS = 240

/**
 * Test footage for the live wall: the empty room of the person video of ../shared/media, and
 * a full-length photo of a person (faces/person-vlado5.jpg, cropped to him) gliding left and
 * right at a known speed under a magenta bar of the picture's width (ffmpeg's overlay filter).
 * In any frame the bar's centre is the person's centre, whatever the device says; 5 fps, a key
 * frame every second, FOOTAGE_SECONDS long: the 10 s walk repeated, since the RTSP server
 * does not loop this file (its pipeline ends at the file's end and every client reconnects).
 * Answers the mp4's path in `dir`.
 */
export async function makeWallFootage(dir: string): Promise<string> {
  const f = WALL_FOOTAGE
  const background = path.join(dir, 'room.png')
  execFileSync(FFMPEG, ['-v', 'error', '-ss', '1', '-i', PERSON_VIDEO, '-frames:v', '1', '-y', background])
  const person = path.join(dir, 'person.png')
  // The photo is 959 × 1024; he stands in x 300-680.
  await sharp(path.resolve(PERSON_VIDEO, '../faces/person-vlado5.jpg')).extract({ left: 300, top: 0, width: 380, height: 1024 })
    .resize({ height: f.personHeight }).png().toFile(person)
  const { width: personWidth } = await sharp(person).metadata()
  const legSeconds = 5
  const x = `${f.left}+${f.speed}*(${legSeconds}-abs(mod(t\\,${2 * legSeconds})-${legSeconds}))`
  const file = path.join(dir, 'wall.mp4')
  execFileSync(FFMPEG, [
    '-v', 'error', '-loop', '1', '-framerate', String(f.fps), '-i', background,
    '-loop', '1', '-framerate', String(f.fps), '-i', person,
    '-f', 'lavfi', '-i', `color=c=0xFF00FF:s=${personWidth}x${f.markerHeight}:r=${f.fps}`,
    '-filter_complex', `[0][1]overlay=x='${x}':y=${f.personTop}[a];[a][2]overlay=x='${x}':y=${f.markerTop}[v]`,
    '-map', '[v]', '-t', String(FOOTAGE_SECONDS), '-r', String(f.fps), '-c:v', 'libx264', '-preset', 'veryfast', '-g', String(f.fps), '-bf', '0', '-pix_fmt', 'yuv420p', '-y', file,
  ])
  return file
}
