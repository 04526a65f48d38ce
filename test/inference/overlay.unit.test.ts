import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import type { DetectionResultCore, Target } from '../../shared/inference/types.ts'
import { drawOverlay, overlayScale, renderOverlay } from '../../runtime/sidecar/pipeline/overlay.ts'
import type { RgbImage } from '../../runtime/sidecar/pipeline/rgb-image.ts'

const W = 600, H = 400
const GREY = 128
const grey = (): RgbImage => ({ data: Buffer.alloc(W * H * 3, GREY), width: W, height: H })
const px = (img: RgbImage, x: number, y: number) => [...img.data.subarray((y * W + x) * 3, (y * W + x) * 3 + 3)]
const target = (box: Target['box'], extra: Partial<Target> = {}): Target =>
  ({ box, confidence: [{ label: 'face', confidence: 0.87 }], landmark: [], maskPolygon: [], ...extra })
const result = (...targets: Target[]): DetectionResultCore =>
  ({ algorithmCode: 'x', timestamp: '1', areaList: [{ areaId: '0', areaName: 'default', bDetected: false, targetList: targets }] })

/** Pixels in a rectangle that differ from the grey background. */
const changed = (img: RgbImage, x0: number, y0: number, x1: number, y1: number) => {
  let n = 0
  for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) if (px(img, x, y).some((v) => v !== GREY)) n++
  return n
}

describe('overlay drawn into the pixels (spec 2.6 fullPicture)', () => {
  const { stroke, font } = overlayScale(W, H)

  it('draws the box edges in the box colour, leaves the inside and the rest of the picture alone', async () => {
    const img = grey()
    await drawOverlay(img, result(target({ x: 200, y: 150, width: 100, height: 80 })))
    expect(stroke).toBe(2)
    expect(px(img, 200, 190)).toEqual([0x00, 0xe0, 0x60]) // left edge
    expect(px(img, 250, 230)).toEqual([0x00, 0xe0, 0x60]) // bottom edge
    expect(changed(img, 205, 155, 295, 225)).toBe(0) // inside
    expect(changed(img, 0, 0, W, 100)).toBe(0) // far above: the label sits just above the box
    expect(changed(img, 0, 240, W, H)).toBe(0) // below
  })

  it('puts the label on a dark band above the box, with text in the box colour', async () => {
    const img = grey()
    await drawOverlay(img, result(target({ x: 200, y: 150, width: 100, height: 80 })))
    const band = { top: 150 - Math.ceil(font * 1.17) - 2 * 2, bottom: 150 }
    let dark = 0, text = 0
    for (let y = band.top; y < band.bottom - 1; y++) for (let x = 200; x < 290; x++) {
      const [r, g, b] = px(img, x, y)
      if (r! < 60 && g! < 60 && b! < 60) dark++
      if (g! > r! + 60 && g! > b! + 30) text++
    }
    expect(dark).toBeGreaterThan(500)
    expect(text).toBeGreaterThan(50)
    // Nothing left of the band's start.
    expect(changed(img, 0, band.top, 199, band.bottom - 2)).toBe(0)
  })

  it('keeps the label inside the picture for a box at its top right corner', async () => {
    const img = grey()
    await drawOverlay(img, result(target({ x: W - 30, y: 0, width: 30, height: 30 })))
    // No room above: the band goes below the box, and is moved left to end inside the picture:
    // 'face 0.87' is 9 cells of ceil(0.602 × font) plus 2 px of padding each side.
    const bandWidth = 9 * Math.ceil(0.602 * font) + 4
    expect(changed(img, W - bandWidth, 32, W, 44)).toBe(bandWidth * 12)
    expect(changed(img, 0, 32, W - bandWidth, 44)).toBe(0)
    expect(px(img, W - 1, 40)[0]).toBeLessThan(GREY)
  })

  it('draws landmarks as discs and a mask polygon filled translucently; bLogicResult false in amber', async () => {
    const img = grey()
    await drawOverlay(img, result(target({ x: 100, y: 200, width: 150, height: 150 }, {
      bLogicResult: false,
      landmark: [{ xRatio: 150, yRatio: 250 }],
      maskPolygon: [{ xRatio: 0.5, yRatio: 0.5 }, { xRatio: 0.9, yRatio: 0.5 }, { xRatio: 0.9, yRatio: 0.9 }, { xRatio: 0.5, yRatio: 0.9 }],
    })))
    expect(px(img, 150, 250)).toEqual([0xff, 0x30, 0x60])
    expect(px(img, 100, 300)).toEqual([0xff, 0xb0, 0x00])
    // 20 % of #00a0ff over grey inside the polygon.
    expect(px(img, 450, 300)).toEqual([Math.trunc(GREY * 0.8), Math.trunc(GREY + (0xa0 - GREY) * 0.2), Math.trunc(GREY + (0xff - GREY) * 0.2)])
    expect(px(img, 300, 199 - font * 2)).toEqual([GREY, GREY, GREY])
  })

  it('encodes a JPEG of the picture with the overlay', async () => {
    const jpeg = await renderOverlay(grey(), result(target({ x: 200, y: 150, width: 100, height: 80 })))
    const meta = await sharp(jpeg).metadata()
    expect(meta).toMatchObject({ format: 'jpeg', width: W, height: H, chromaSubsampling: '4:2:0' })
    const { data } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true })
    const at = (x: number, y: number) => [...data.subarray((y * W + x) * 3, (y * W + x) * 3 + 3)]
    expect(at(200, 190)[1]).toBeGreaterThan(180)
    expect(Math.abs(at(10, 10)[0]! - GREY)).toBeLessThanOrEqual(2)
  })
})
