/** Snapshots and captures (runtime/system/image-quality.ts frameJpeg): the box drawn in full size, then the picture capped. */
import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import { frameJpeg } from '../../runtime/system/image-quality.ts'
import { firstLuminanceQuantizer } from './jpeg-quantizer.ts'

describe('frame JPEGs under the image quality settings', () => {
  const frame = { rgb: Buffer.alloc(400 * 200 * 3, 40), width: 400, height: 200 }
  const svg = '<svg width="400" height="200"><rect x="200" y="100" width="200" height="100" fill="#00ff00"/></svg>'

  it('keeps full size at maxSide 0 and scales down with the box where it was', async () => {
    const full = await frameJpeg(frame, { quality: 90, maxSide: 0 }, svg)
    expect(await sharp(full).metadata()).toMatchObject({ width: 400, height: 200 })
    // Quality 90: scale 200 - 180 = 20 % → (16 × 20 + 50) / 100 = 3.
    expect(firstLuminanceQuantizer(full)).toBe(3)
    const small = await frameJpeg(frame, { quality: 50, maxSide: 100 }, svg)
    expect(await sharp(small).metadata()).toMatchObject({ width: 100, height: 50 })
    expect(firstLuminanceQuantizer(small)).toBe(16)
    const { data } = await sharp(small).raw().toBuffer({ resolveWithObject: true })
    const pixel = (x: number, y: number) => [...data.subarray((y * 100 + x) * 3, (y * 100 + x) * 3 + 3)]
    expect(pixel(75, 37)[1]).toBeGreaterThan(200) // inside the box: green
    expect(pixel(25, 12)[1]).toBeLessThan(60) // outside: the frame's grey
  })
})
