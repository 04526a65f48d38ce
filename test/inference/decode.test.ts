import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import sharp from 'sharp'
import { afterAll, describe, expect, it } from 'vitest'
import { decodeImage } from '../../runtime/sidecar/image/decode.ts'
import { ImageError } from '../../runtime/sidecar/image/image-error.ts'
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

  it('a BMP header over the pixel limit is refused before bmp-js runs', async () => {
    const header = encodeBmp24(Buffer.alloc(3), 1, 1)
    header.writeInt32LE(50_000, 18)
    header.writeInt32LE(50_000, 22)
    const error = await failure(decodeImage({ kind: 'bytes', bytes: header }, limits))
    expect(error.errorId).toBe('IMAGE_RESOLUTION_TOO_LARGE')
  })
})
