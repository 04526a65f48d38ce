import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import sharp from 'sharp'
import { afterAll, describe, expect, it } from 'vitest'
import { decodeImage, decodeScaled, jpegShrinkOnLoad, readCheckedImage } from '../../runtime/sidecar/image/decode.ts'
import { ImageError } from '../../runtime/sidecar/image/image-error.ts'
import { bgrRows, writeBmp } from './bmp-writer.ts'
import { encodeBmp24, pngBombHeader } from './images.ts'
import { limits, samplePath } from './helpers.ts'

const failure = async (p: Promise<unknown>): Promise<ImageError> => {
  try { await p } catch (error) { if (error instanceof ImageError) return error; throw error }
  throw new Error('expected an ImageError')
}

describe('image decoding and header checks (spec 7.1)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dec-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('decodes a 24-bit BMP pixel for pixel, top row first', async () => {
    const rgb = Buffer.from([255, 0, 0, 0, 255, 0, 0, 0, 255, /* row 2 */ 10, 20, 30, 40, 50, 60, 70, 80, 90])
    const image = await decodeImage({ kind: 'bytes', bytes: encodeBmp24(rgb, 3, 2) }, limits)
    expect(image.width).toBe(3)
    expect(image.height).toBe(2)
    expect([...image.data]).toEqual([...rgb])
  })

  it('decodes JPEG and PNG to RGB of the header dimensions', async () => {
    const jpeg = await decodeImage({ kind: 'path', path: samplePath(1) }, limits)
    expect([jpeg.width, jpeg.height, jpeg.data.length]).toEqual([1920, 1280, 1920 * 1280 * 3])
    const png = await sharp({ create: { width: 5, height: 4, channels: 4, background: { r: 1, g: 2, b: 3, alpha: 0.5 } } }).png().toBuffer()
    const decoded = await decodeImage({ kind: 'bytes', bytes: png }, limits)
    expect([decoded.width, decoded.height, decoded.data.length]).toEqual([5, 4, 60])
  })

  it('corrupt or unsupported data → ImageDecodeFailed', async () => {
    const jpeg = readFileSync(samplePath(2))
    const cases: Buffer[] = [
      Buffer.from('not an image at all'),
      jpeg.subarray(0, 2000), // truncated JPEG
      Buffer.concat([jpeg.subarray(0, 600), Buffer.alloc(5000, 0x55)]), // garbage after the header
      encodeBmp24(Buffer.alloc(30 * 30 * 3), 30, 30).subarray(0, 500), // truncated BMP
      Buffer.from('BM' + 'x'.repeat(10)), // BMP header cut short
      await sharp({ create: { width: 4, height: 4, channels: 3, background: '#000' } }).webp().toBuffer(), // unsupported format
    ]
    for (const bytes of cases) {
      const error = await failure(decodeImage({ kind: 'bytes', bytes }, limits))
      expect(error.errorId).toBe('ImageDecodeFailed')
    }
  })

  it('encoded size over maxEncodedImageBytes → IMAGE_INPUT_TOO_LARGE with the spec details', async () => {
    const bytes = readFileSync(samplePath(1))
    const small = { ...limits, maxEncodedImageBytes: 100_000 }
    const error = await failure(decodeImage({ kind: 'bytes', bytes }, small, 'image'))
    expect(error.errorId).toBe('IMAGE_INPUT_TOO_LARGE')
    expect(error.details).toEqual({ actualBytes: bytes.length, limitBytes: 100_000, resource: 'encoded-image', purpose: 'image' })
    // From a staged file the size comes from the file system, before anything is read.
    const staged = path.join(dir, 'big.jpg')
    writeFileSync(staged, bytes)
    const fromFile = await failure(decodeImage({ kind: 'path', path: staged }, small, 'image'))
    expect(fromFile.errorId).toBe('IMAGE_INPUT_TOO_LARGE')
    expect(fromFile.details.actualBytes).toBe(bytes.length)
  })

  it('a decompression-bomb PNG header → IMAGE_RESOLUTION_TOO_LARGE without decoding', async () => {
    const bomb = pngBombHeader(100_000, 100_000)
    expect(bomb.length).toBeLessThan(100)
    const before = process.memoryUsage()
    const error = await failure(decodeImage({ kind: 'bytes', bytes: bomb }, limits))
    const after = process.memoryUsage()
    expect(error.errorId).toBe('IMAGE_RESOLUTION_TOO_LARGE')
    expect(error.details).toMatchObject({ width: 100_000, height: 100_000, limitPixels: limits.maxImagePixels })
    // Decoding would need 30 GB; the check allocates nothing of that order.
    expect(after.rss - before.rss).toBeLessThan(64 * 1024 * 1024)
  })

  it('a BMP header over the pixel limit is refused before decoding', async () => {
    const header = encodeBmp24(Buffer.alloc(3), 1, 1)
    header.writeInt32LE(50_000, 18)
    header.writeInt32LE(50_000, 22)
    const error = await failure(decodeImage({ kind: 'bytes', bytes: header }, limits))
    expect(error.errorId).toBe('IMAGE_RESOLUTION_TOO_LARGE')
  })
})

describe('BMP layouts written by real encoders', () => {
  const decode = (bytes: Buffer) => decodeImage({ kind: 'bytes', bytes }, limits)
  const rgbOf = async (bytes: Buffer) => { const image = await decode(bytes); return [image.width, image.height, ...image.data] }

  it('V5 header (124 bytes), 24-bit bottom-up, pixels at bfOffBits past a gap', async () => {
    const rgb = Buffer.from([255, 0, 0, 0, 255, 0, 0, 0, 255, /* row 2 */ 10, 20, 30, 40, 50, 60, 70, 80, 90])
    const bmp = writeBmp({ width: 3, height: 2, bitsPerPixel: 24, headerSize: 124, gap: 16, rows: bgrRows(rgb, 3, 2) })
    expect(bmp.readUInt32LE(10)).toBe(14 + 124 + 16)
    expect(await rgbOf(bmp)).toEqual([3, 2, ...rgb])
  })

  it('V5 header, 32-bit BI_BITFIELDS, top-down, masks in R-G-B-A byte order', async () => {
    const bmp = writeBmp({
      width: 2, height: 3, bitsPerPixel: 32, headerSize: 124, compression: 3, topDown: true,
      masks: [0x000000ff, 0x0000ff00, 0x00ff0000, 0xff000000],
      // bytes per pixel: R, G, B, A
      rows: [
        Buffer.from([1, 2, 3, 255, 4, 5, 6, 128]),
        Buffer.from([200, 100, 50, 0, 7, 8, 9, 255]),
        Buffer.from([255, 255, 255, 255, 0, 0, 0, 255]),
      ],
    })
    expect(await rgbOf(bmp)).toEqual([2, 3, 1, 2, 3, 4, 5, 6, 200, 100, 50, 7, 8, 9, 255, 255, 255, 0, 0, 0])
  })

  it('V4 header (108 bytes), 32-bit BI_RGB (B, G, R, unused): the zero masks of the header are not used', async () => {
    const bmp = writeBmp({
      width: 2, height: 2, bitsPerPixel: 32, headerSize: 108,
      rows: [Buffer.from([30, 20, 10, 0, 60, 50, 40, 0]), Buffer.from([90, 80, 70, 0, 255, 0, 128, 0])],
    })
    expect(await rgbOf(bmp)).toEqual([2, 2, 10, 20, 30, 40, 50, 60, 70, 80, 90, 128, 0, 255])
  })

  it('40-byte header with BI_BITFIELDS 5-6-5 masks after it (16-bit), channels scaled to 0..255', async () => {
    const words = [0xf800, 0x07e0, 0x001f, 0x8410]
    const row = Buffer.alloc(8)
    words.forEach((word, i) => row.writeUInt16LE(word, i * 2))
    const bmp = writeBmp({ width: 4, height: 1, bitsPerPixel: 16, headerSize: 40, compression: 3, masks: [0xf800, 0x07e0, 0x001f, 0], rows: [row] })
    // 0x8410: red 16/31, green 32/63, blue 16/31
    expect(await rgbOf(bmp)).toEqual([4, 1, 255, 0, 0, 0, 255, 0, 0, 0, 255, 132, 130, 132])
  })

  it('16-bit BI_RGB is 5-5-5', async () => {
    const row = Buffer.alloc(4)
    row.writeUInt16LE(0x7c00, 0)
    row.writeUInt16LE(0x03ff, 2)
    const bmp = writeBmp({ width: 2, height: 1, bitsPerPixel: 16, headerSize: 124, rows: [row] })
    expect(await rgbOf(bmp)).toEqual([2, 1, 255, 0, 0, 0, 255, 255])
  })

  it('palette images: 8-bit (V5, short table, gap), 4-bit (V4) and 1-bit (40-byte header)', async () => {
    const palette: [number, number, number][] = [[255, 0, 0], [0, 255, 0], [0, 0, 255]]
    const eight = writeBmp({ width: 3, height: 2, bitsPerPixel: 8, headerSize: 124, palette, gap: 8, rows: [Buffer.from([0, 1, 2]), Buffer.from([2, 1, 0])] })
    expect(await rgbOf(eight)).toEqual([3, 2, 255, 0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 255, 0, 255, 0, 255, 0, 0])
    const four = writeBmp({ width: 3, height: 1, bitsPerPixel: 4, headerSize: 108, palette: [[0, 0, 0], ...palette], rows: [Buffer.from([0x12, 0x30])] })
    expect(await rgbOf(four)).toEqual([3, 1, 255, 0, 0, 0, 255, 0, 0, 0, 255])
    const one = writeBmp({ width: 10, height: 1, bitsPerPixel: 1, headerSize: 40, palette: [[0, 0, 0], [255, 255, 255]], rows: [Buffer.from([0b10100000, 0b11000000])] })
    const image = await decode(one)
    expect([...image.data].filter((_, i) => i % 3 === 0)).toEqual([255, 0, 255, 0, 0, 0, 0, 0, 255, 255])
  })

  it('sample1 as V5 BMPs (24-bit bottom-up, 32-bit BI_BITFIELDS top-down) decodes to the JPEG\'s pixels exactly', async () => {
    const jpeg = await decodeImage({ kind: 'path', path: samplePath(1) }, limits)
    const v5 = writeBmp({ width: jpeg.width, height: jpeg.height, bitsPerPixel: 24, headerSize: 124, rows: bgrRows(jpeg.data, jpeg.width, jpeg.height) })
    const decoded = await decode(v5)
    expect([decoded.width, decoded.height]).toEqual([jpeg.width, jpeg.height])
    expect(decoded.data.equals(jpeg.data)).toBe(true)
    const rows32 = bgrRows(jpeg.data, jpeg.width, jpeg.height).map((row) => {
      const out = Buffer.alloc(jpeg.width * 4, 0xff) // B, G, R, A
      for (let x = 0; x < jpeg.width; x++) row.copy(out, x * 4, x * 3, x * 3 + 3)
      return out
    })
    const topDown = writeBmp({ width: jpeg.width, height: jpeg.height, bitsPerPixel: 32, headerSize: 124, compression: 3, topDown: true, masks: [0x00ff0000, 0x0000ff00, 0x000000ff, 0xff000000], rows: rows32 })
    expect((await decode(topDown)).data.equals(jpeg.data)).toBe(true)
  })

  it('compressed, OS/2, misplaced or truncated BMPs → ImageDecodeFailed', async () => {
    const rows = [Buffer.from([1, 2, 3, 4])]
    const palette: [number, number, number][] = [[0, 0, 0], [1, 1, 1], [2, 2, 2], [3, 3, 3], [4, 4, 4]]
    const rle8 = writeBmp({ width: 4, height: 1, bitsPerPixel: 8, headerSize: 40, compression: 1, palette, rows })
    const os2 = writeBmp({ width: 4, height: 1, bitsPerPixel: 8, headerSize: 40, palette, rows })
    os2.writeUInt32LE(12, 14)
    const offsetPastEnd = writeBmp({ width: 4, height: 1, bitsPerPixel: 8, headerSize: 124, palette, rows })
    offsetPastEnd.writeUInt32LE(offsetPastEnd.length - 2, 10)
    const bitfields24 = writeBmp({ width: 1, height: 1, bitsPerPixel: 24, headerSize: 124, compression: 3, masks: [0xff0000, 0xff00, 0xff, 0], rows: [Buffer.from([1, 2, 3])] })
    const twoBit = writeBmp({ width: 4, height: 1, bitsPerPixel: 8, headerSize: 40, palette, rows })
    twoBit.writeUInt16LE(2, 28)
    const truncated = writeBmp({ width: 40, height: 40, bitsPerPixel: 32, headerSize: 124, rows: Array.from({ length: 40 }, () => Buffer.alloc(160)) }).subarray(0, 3000)
    for (const [name, bytes] of Object.entries({ rle8, os2, offsetPastEnd, bitfields24, twoBit, truncated })) {
      const error = await failure(decode(bytes))
      expect(error.errorId, name).toBe('ImageDecodeFailed')
    }
  })

  it('a V5 header over the pixel limit → IMAGE_RESOLUTION_TOO_LARGE from the header, nothing allocated', async () => {
    const header = writeBmp({ width: 1, height: 1, bitsPerPixel: 32, headerSize: 124, topDown: true, rows: [Buffer.alloc(4)] })
    header.writeInt32LE(60_000, 18)
    header.writeInt32LE(-60_000, 22)
    const before = process.memoryUsage().rss
    const error = await failure(decode(header))
    expect(error.errorId).toBe('IMAGE_RESOLUTION_TOO_LARGE')
    expect(error.details).toMatchObject({ width: 60_000, height: 60_000, limitPixels: limits.maxImagePixels })
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024)
  })

  it('shrink-on-load: libjpeg\'s step leaves at least a 2× reduce on both axes (sharp, fastShrinkOnLoad: false)', () => {
    // 1920 × 1280 to BlazeFace's 256 × 171: 7.5× → ½; to CenterNet's 512 × 341: 3.75× → none; to 320 × 213: 6× → ½.
    expect(jpegShrinkOnLoad(1920, 1280, 256, 171)).toBe(2)
    expect(jpegShrinkOnLoad(1920, 1280, 512, 341)).toBe(1)
    expect(jpegShrinkOnLoad(1920, 1280, 320, 213)).toBe(2)
    expect(jpegShrinkOnLoad(4096, 4096, 256, 256)).toBe(8)
    expect(jpegShrinkOnLoad(2048, 2048, 256, 256)).toBe(4)
    // The smaller ratio decides.
    expect(jpegShrinkOnLoad(4000, 1000, 256, 256)).toBe(1)
  })

  it('decodes a JPEG straight at the model\'s size, upright; corrupt data → ImageDecodeFailed', async () => {
    const checked = await readCheckedImage({ kind: 'path', path: samplePath(1) }, limits)
    expect(checked.upright).toEqual({ width: 1920, height: 1280 })
    const small = await decodeScaled(checked, limits, 256, 171)
    expect([small.width, small.height, small.data.length]).toEqual([256, 171, 256 * 171 * 3])
    // A portrait stored sideways (EXIF orientation 6): its upright size is the turned one.
    const sideways = await sharp(samplePath(1)).jpeg().withMetadata({ orientation: 6 }).toBuffer()
    const turned = await readCheckedImage({ kind: 'bytes', bytes: sideways }, limits)
    expect([turned.width, turned.height, turned.upright.width, turned.upright.height]).toEqual([1920, 1280, 1280, 1920])
    const upright = await decodeScaled(turned, limits, 171, 256)
    expect([upright.width, upright.height]).toEqual([171, 256])
    const bytes = readFileSync(samplePath(1))
    const broken = await readCheckedImage({ kind: 'bytes', bytes: bytes.subarray(0, Math.floor(bytes.length / 2)) }, limits)
    expect((await failure(decodeScaled(broken, limits, 256, 171))).errorId).toBe('ImageDecodeFailed')
  })
})
