import type { RgbImage } from '../pipeline/rgb-image.ts'
import { ImageError } from './image-error.ts'

/**
 * Windows BMP decoder (sharp does not read BMP). Handles what real encoders write:
 * BITMAPINFOHEADER and every longer header (V2/V3 52/56, V4 108, V5 124 bytes — ImageMagick,
 * GIMP and Windows write V4/V5), 1/4/8-bit palettes, 16/24/32-bit pixels, BI_RGB and
 * BI_BITFIELDS / BI_ALPHABITFIELDS, bottom-up and top-down rows. Pixels are read from
 * `bfOffBits`, never from "right after the header". Compressed BMPs (RLE, embedded
 * JPEG/PNG) and OS/2 core headers are refused as ImageDecodeFailed.
 */

const BI_RGB = 0
const BI_BITFIELDS = 3
const BI_ALPHABITFIELDS = 6
const FILE_HEADER_BYTES = 14
const INFO_HEADER_BYTES = 40
/** Colour masks sit right after the 40-byte info header: inside V2+ headers, or after a 40-byte one. */
const MASKS_AT = FILE_HEADER_BYTES + INFO_HEADER_BYTES

export interface BmpHeader {
  width: number
  height: number
  topDown: boolean
  bitsPerPixel: number
  compression: number
  headerSize: number
  /** bfOffBits: where the pixel array starts. */
  pixelOffset: number
  colorsUsed: number
}

const broken = (why: string) => new ImageError('ImageDecodeFailed', `BMP ${why}`)

/** The file and info headers only: enough to check the pixel limit before any allocation. */
export function readBmpHeader(bytes: Buffer): BmpHeader {
  if (bytes.length < FILE_HEADER_BYTES + INFO_HEADER_BYTES) throw broken('header is truncated')
  const headerSize = bytes.readUInt32LE(14)
  if (headerSize < INFO_HEADER_BYTES) throw broken(`header of ${headerSize} bytes is not supported`)
  const width = bytes.readInt32LE(18)
  const rawHeight = bytes.readInt32LE(22)
  const bitsPerPixel = bytes.readUInt16LE(28)
  // A negative height means the rows are stored top-down.
  if (width <= 0 || rawHeight === 0 || rawHeight === -0x80000000) throw broken('dimensions are invalid')
  return {
    width,
    height: Math.abs(rawHeight),
    topDown: rawHeight < 0,
    bitsPerPixel,
    compression: bytes.readUInt32LE(30),
    headerSize,
    pixelOffset: bytes.readUInt32LE(10),
    colorsUsed: bytes.readUInt32LE(46),
  }
}

/** Decodes to RGB (alpha dropped). Call after the pixel limit was checked on `readBmpHeader`. */
export function decodeBmp(bytes: Buffer): RgbImage {
  const header = readBmpHeader(bytes)
  const { width, height, bitsPerPixel: bpp, compression } = header
  if (![1, 4, 8, 16, 24, 32].includes(bpp)) throw broken(`${bpp} bits per pixel is not supported`)
  const bitfields = compression === BI_BITFIELDS || compression === BI_ALPHABITFIELDS
  if (compression !== BI_RGB && !(bitfields && (bpp === 16 || bpp === 32)))
    throw broken(`compression ${compression} with ${bpp} bits per pixel is not supported`)

  const rowBytes = Math.floor((width * bpp + 31) / 32) * 4
  const { pixelOffset } = header
  if (pixelOffset < FILE_HEADER_BYTES + INFO_HEADER_BYTES || pixelOffset + rowBytes * height > bytes.length)
    throw broken('pixel data is truncated or misplaced')

  const out = Buffer.alloc(width * height * 3)
  const readRow = bpp <= 8 ? paletteRow(bytes, header) : bpp === 24 ? bgrRow(bytes) : maskedRow(bytes, header, bitfields)
  for (let y = 0; y < height; y++) {
    const storedRow = header.topDown ? y : height - 1 - y
    readRow(pixelOffset + storedRow * rowBytes, width, out, y * width * 3)
  }
  return { data: out, width, height }
}

type RowReader = (from: number, width: number, out: Buffer, to: number) => void

function paletteRow(bytes: Buffer, header: BmpHeader): RowReader {
  const { bitsPerPixel: bpp, headerSize, pixelOffset } = header
  const max = 1 << bpp
  const count = header.colorsUsed === 0 || header.colorsUsed > max ? max : header.colorsUsed
  const paletteAt = FILE_HEADER_BYTES + headerSize
  // Entries are B, G, R, reserved; the table must end before the pixels.
  if (paletteAt + count * 4 > pixelOffset) throw broken('colour table is truncated')
  const palette = Buffer.alloc(max * 3) // indices past the table are black
  for (let i = 0; i < count; i++) {
    palette[i * 3] = bytes[paletteAt + i * 4 + 2]!
    palette[i * 3 + 1] = bytes[paletteAt + i * 4 + 1]!
    palette[i * 3 + 2] = bytes[paletteAt + i * 4]!
  }
  const perByte = 8 / bpp
  const indexMask = max - 1
  return (from, width, out, to) => {
    for (let x = 0; x < width; x++) {
      const byte = bytes[from + Math.floor(x / perByte)]!
      const shift = 8 - bpp * ((x % perByte) + 1)
      const index = (byte >> shift) & indexMask
      out[to + x * 3] = palette[index * 3]!
      out[to + x * 3 + 1] = palette[index * 3 + 1]!
      out[to + x * 3 + 2] = palette[index * 3 + 2]!
    }
  }
}

function bgrRow(bytes: Buffer): RowReader {
  return (from, width, out, to) => {
    for (let x = 0; x < width; x++) {
      out[to + x * 3] = bytes[from + x * 3 + 2]!
      out[to + x * 3 + 1] = bytes[from + x * 3 + 1]!
      out[to + x * 3 + 2] = bytes[from + x * 3]!
    }
  }
}

/** 16/32-bit pixels: BI_RGB uses the fixed 5-5-5 / 8-8-8 layouts, BI_BITFIELDS the header's masks. */
function maskedRow(bytes: Buffer, header: BmpHeader, bitfields: boolean): RowReader {
  const bpp = header.bitsPerPixel
  let masks: [number, number, number]
  if (bitfields) {
    if (bytes.length < MASKS_AT + 12) throw broken('colour masks are truncated')
    masks = [bytes.readUInt32LE(MASKS_AT), bytes.readUInt32LE(MASKS_AT + 4), bytes.readUInt32LE(MASKS_AT + 8)]
  } else {
    masks = bpp === 16 ? [0x7c00, 0x03e0, 0x001f] : [0xff0000, 0x00ff00, 0x0000ff]
  }
  const [red, green, blue] = masks.map(channel)
  const read = bpp === 16 ? (at: number) => bytes.readUInt16LE(at) : (at: number) => bytes.readUInt32LE(at)
  const step = bpp / 8
  return (from, width, out, to) => {
    for (let x = 0; x < width; x++) {
      const pixel = read(from + x * step)
      out[to + x * 3] = red!(pixel)
      out[to + x * 3 + 1] = green!(pixel)
      out[to + x * 3 + 2] = blue!(pixel)
    }
  }
}

/** Extracts one channel by its mask and scales it to 0..255. */
function channel(mask: number): (pixel: number) => number {
  if (mask === 0) return () => 0
  let shift = 0
  while (((mask >>> shift) & 1) === 0) shift++
  let bits = 0
  while (bits + shift < 32 && ((mask >>> (shift + bits)) & 1) === 1) bits++
  const max = 2 ** bits - 1
  if (bits >= 8) return (pixel) => ((pixel & mask) >>> shift) >>> (bits - 8)
  return (pixel) => Math.round((((pixel & mask) >>> shift) * 255) / max)
}
