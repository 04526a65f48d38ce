import { execFileSync } from 'node:child_process'
import path from 'node:path'

const root = path.resolve(import.meta.dirname, '../..')
/** The ffmpeg the device uses by default (the npm package's binary). */
export const FFMPEG = path.join(root, 'node_modules/@ffmpeg-installer/linux-x64/ffmpeg')
/** The footage of people walking in one at a time; CI runs in a fresh clone with the shared folder beside it. */
export const PERSON_VIDEO = path.resolve(root, '../shared/media/one-by-one-person-detection.mp4')

/** The video's own size and rate, read from ffmpeg's description of its stream (not from the device). */
export function videoFacts(file: string): { width: number; height: number; fps: number } {
  let text = ''
  try {
    execFileSync(FFMPEG, ['-hide_banner', '-i', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (error) {
    text = (error as { stderr: string }).stderr // ffmpeg exits 1 without an output file
  }
  const line = text.split('\n').find((l) => /Stream #0:\d.*Video:/.test(l))!
  const [, width, height] = /, (\d+)x(\d+)/.exec(line)!
  return { width: Number(width), height: Number(height), fps: Number(/, ([\d.]+) fps/.exec(line)![1]) }
}
