import { open, stat } from 'node:fs/promises'
import sharp from 'sharp'
import type { RgbImage } from '../pipeline/rgb-image.ts'
import { decodeBmp, readBmpHeader } from './bmp.ts'
import { isSrgbProfile } from './icc.ts'
import { ImageError } from './image-error.ts'

/** Live media limits (spec 2.5 `maxEncodedImageBytes` / `maxImagePixels`). */
export interface ImageLimits {
  maxEncodedImageBytes: number
  maxImagePixels: number
}

export type EncodedSource = { kind: 'path'; path: string } | { kind: 'bytes'; bytes: Buffer }
export type ImageFormat = 'jpeg' | 'png' | 'bmp'

const tooLarge = (actualBytes: number, limits: ImageLimits, purpose: string) =>
  new ImageError('IMAGE_INPUT_TOO_LARGE', `encoded image of ${actualBytes} bytes exceeds ${limits.maxEncodedImageBytes}`, {
    actualBytes, limitBytes: limits.maxEncodedImageBytes, resource: 'encoded-image', purpose,
  })

/** Reads the encoded bytes, checking the size first (from `stat` for a file: nothing read when too large). */
export async function readEncoded(source: EncodedSource, limits: ImageLimits, purpose: string): Promise<Buffer> {
  if (source.kind === 'bytes') {
    if (source.bytes.length > limits.maxEncodedImageBytes) throw tooLarge(source.bytes.length, limits, purpose)
    return source.bytes
  }
  let size: number
  try {
    size = (await stat(source.path)).size
  } catch {
    throw new ImageError('ImageDecodeFailed', 'image file is not readable')
  }
  if (size > limits.maxEncodedImageBytes) throw tooLarge(size, limits, purpose)
  const handle = await open(source.path, 'r')
  try {
    return await handle.readFile()
  } finally {
    await handle.close()
  }
}

export function sniffFormat(bytes: Buffer): ImageFormat | null {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg'
  if (bytes.length >= 8 && bytes.readUInt32BE(0) === 0x89504e47 && bytes.readUInt32BE(4) === 0x0d0a1a0a) return 'png'
  if (bytes.length >= 2 && bytes[0] === 0x42 && bytes[1] === 0x4d) return 'bmp'
  return null
}

/**
 * Image dimensions from the header only: no pixel is decoded (a decompression bomb allocates
 * nothing). `srgbProfile`: its embedded colour profile is sRGB's (icc.ts).
 */
export async function probeDimensions(bytes: Buffer, format: ImageFormat): Promise<{ width: number; height: number; upright: { width: number; height: number }; srgbProfile: boolean }> {
  if (format === 'bmp') {
    const size = readBmpHeader(bytes)
    return { ...size, upright: size, srgbProfile: false }
  }
  try {
    const meta = await sharp(bytes, { limitInputPixels: false }).metadata()
    if (!meta.width || !meta.height) throw new Error('no dimensions')
    const upright = meta.autoOrient?.width && meta.autoOrient.height ? { width: meta.autoOrient.width, height: meta.autoOrient.height } : { width: meta.width, height: meta.height }
    return { width: meta.width, height: meta.height, upright, srgbProfile: isSrgbProfile(meta.icc) }
  } catch {
    throw new ImageError('ImageDecodeFailed', `${format} header is unreadable`)
  }
}

/**
 * An encoded image whose header passed the checks of spec 7.1; no pixel is decoded yet.
 * `upright`: its size once its EXIF orientation is applied (the size of the decoded image).
 */
export interface CheckedImage { bytes: Buffer; format: ImageFormat; width: number; height: number; upright: { width: number; height: number }; srgbProfile: boolean }

/**
 * Reads an encoded image and checks its header (spec 7.1): encoded size over
 * `maxEncodedImageBytes` → IMAGE_INPUT_TOO_LARGE, pixels over `maxImagePixels` →
 * IMAGE_RESOLUTION_TOO_LARGE, not a JPEG, PNG or BMP → ImageDecodeFailed. The caller knows
 * the dimensions before any pixel memory is allocated (the decode memory admission needs them).
 */
export async function readCheckedImage(source: EncodedSource, limits: ImageLimits, purpose = 'image'): Promise<CheckedImage> {
  const bytes = await readEncoded(source, limits, purpose)
  const format = sniffFormat(bytes)
  if (!format) throw new ImageError('ImageDecodeFailed', 'not a JPEG, PNG or BMP image')
  const { width, height, upright, srgbProfile } = await probeDimensions(bytes, format)
  checkPixels(width, height, limits)
  return { bytes, format, width, height, upright, srgbProfile }
}

/** Decodes a checked image into RGB: JPEG and PNG with sharp, BMP with ./bmp.ts (sharp does not read BMP). */
export async function decodePixels(image: CheckedImage, limits: ImageLimits): Promise<RgbImage> {
  return image.format === 'bmp' ? decodeBmp(image.bytes) : decodeWithSharp(image.bytes, limits, image.srgbProfile)
}

/** Header checks and decode in one (spec 7.1 refusals as for readCheckedImage, corrupt data → ImageDecodeFailed). */
export async function decodeImage(source: EncodedSource, limits: ImageLimits, purpose = 'image'): Promise<RgbImage> {
  return decodePixels(await readCheckedImage(source, limits, purpose), limits)
}

export function checkPixels(width: number, height: number, limits: ImageLimits): void {
  if (width * height > limits.maxImagePixels)
    throw new ImageError('IMAGE_RESOLUTION_TOO_LARGE', `${width}x${height} exceeds ${limits.maxImagePixels} pixels`, {
      width, height, actualPixels: width * height, limitPixels: limits.maxImagePixels, resource: 'decoded-image',
    })
}

/**
 * sharp's decode of a photo, upright (its EXIF orientation applied: a portrait phone photo is
 * often stored sideways), in sRGB (an sRGB profile is not applied: the pixels are sRGB already,
 * icc.ts; any other profile is), at its own size or resized to `size`.
 */
async function decodeWithSharp(bytes: Buffer, limits: ImageLimits, srgbProfile: boolean, size?: { width: number; height: number }): Promise<RgbImage> {
  try {
    const upright = sharp(bytes, { limitInputPixels: limits.maxImagePixels, failOn: 'error', ignoreIcc: srgbProfile }).autoOrient()
    const sized = size ? upright.resize(size.width, size.height, { fit: 'fill', kernel: 'linear', fastShrinkOnLoad: false }) : upright
    const { data, info } = await sized.removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true })
    return toRgb(data, info.width, info.height, info.channels)
  } catch {
    throw new ImageError('ImageDecodeFailed', 'image data is corrupt')
  }
}

/**
 * The step libjpeg decodes a JPEG at when sharp resizes it from `width` × `height` to
 * `toWidth` × `toHeight` with `fastShrinkOnLoad: false` (1, 2, 4 or 8): sharp takes the
 * largest that leaves at least a 2× reduce on both axes (its pipeline's pre-shrink).
 */
export function jpegShrinkOnLoad(width: number, height: number, toWidth: number, toHeight: number): 1 | 2 | 4 | 8 {
  const shrink = Math.min(width / toWidth, height / toHeight)
  return shrink >= 16 ? 8 : shrink >= 8 ? 4 : shrink >= 4 ? 2 : 1
}

/**
 * A JPEG decoded straight at `width` × `height` of its upright image (docs/detection.md
 * "Decoding at the model's size"): libjpeg decodes at 1/2, 1/4 or 1/8 of the size where
 * that stays at least the target (sharp's shrink-on-load, `fastShrinkOnLoad: false`: the
 * rest is a linear reduce, as the model's own resize), so the full pixels are never decoded.
 */
export function decodeScaled(image: CheckedImage, limits: ImageLimits, width: number, height: number): Promise<RgbImage> {
  return decodeWithSharp(image.bytes, limits, image.srgbProfile, { width, height })
}

function toRgb(data: Buffer, width: number, height: number, channels: number): RgbImage {
  if (channels === 3) return { data, width, height }
  const n = width * height
  const out = Buffer.allocUnsafe(n * 3)
  for (let i = 0; i < n; i++)
    for (let c = 0; c < 3; c++) out[i * 3 + c] = data[i * channels + Math.min(c, channels - 1)]!
  return { data: out, width, height }
}
