import { readdir } from 'node:fs/promises'
import path from 'node:path'
import sharp from 'sharp'

/**
 * Camera frames for the simulated channels (from a folder of images): every
 * JPEG/PNG of a folder, decoded once with sharp and resized to the camera resolution, as
 * raw RGB. Channels cycle through them, each starting at a different image.
 */
export interface RgbFrame {
  kind: 'rgb'
  width: number
  height: number
  data: Uint8Array
}

/** Real photographs of groups of people shipped by a test package (ARCHITECTURE.md): sample1..6.jpg. */
export const DEFAULT_FRAME_DIR = 'node_modules/@vladmandic/face-api/demo'
export const DEFAULT_FRAME_PATTERN = /^sample\d+\.jpg$/

export async function loadFrames(dir: string, size = { width: 640, height: 360 }, match = /\.(jpe?g|png)$/i): Promise<RgbFrame[]> {
  const files = (await readdir(dir)).filter((f) => match.test(f)).sort()
  if (files.length === 0) throw new Error(`no image matching ${match} in ${dir}`)
  return Promise.all(files.map(async (f) => {
    const { data, info } = await sharp(path.join(dir, f))
      .resize(size.width, size.height, { fit: 'cover' })
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true })
    return { kind: 'rgb' as const, width: info.width, height: info.height, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) }
  }))
}

/** Frame k of a channel: channels start at different images so they do not offer the same frame at once. */
export const cycleFrames = (frames: RgbFrame[]) => (_task: string, channel: number, k: number) => frames[(channel + k) % frames.length]!
