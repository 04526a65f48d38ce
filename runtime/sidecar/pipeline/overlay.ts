import sharp from 'sharp'
import type { DetectionResultCore, Target } from '../../../shared/inference/types.ts'
import type { JpegSettings } from '../../../shared/system/types.ts'
import { glyphCellWidth, glyphsFor, type GlyphSet } from './glyphs.ts'
import type { RgbImage } from './rgb-image.ts'

type Colour = readonly [number, number, number]

const BOX: Colour = [0x00, 0xe0, 0x60]
const BOX_LOGIC_FALSE: Colour = [0xff, 0xb0, 0x00]
const LANDMARK: Colour = [0xff, 0x30, 0x60]
const POLYGON: Colour = [0x00, 0xa0, 0xff]
const LABEL_BACKGROUND: Colour = [0, 0, 0]

/**
 * JPEG settings of the overlay (spec 2.6 `fullPicture`), chosen by measurement on sample1.jpg
 * (1920×1280, one thread, medians of 22 interleaved runs on the shared 2-core machine):
 * quality 80 with Huffman optimisation (sharp's default) 24 ms / 144 KB; without it 10 ms /
 * 166 KB; 4:4:4 chroma 10 ms / 208 KB; quality 75 7 ms / 152 KB; mozjpeg ~430 ms / 139 KB.
 * The quality stays at 80 by default; the optimisation is not worth 14 ms for 16 % of the size.
 * The operator's image quality (System/SetImageQualityParam) replaces quality and may cap the size.
 */
const OVERLAY_JPEG = { quality: 80, optimiseCoding: false, chromaSubsampling: '4:2:0', mozjpeg: false } as const

/** Sizes the overlay is drawn at, from the picture's longer side (as the SVG overlay had them). */
export function overlayScale(width: number, height: number) {
  const side = Math.max(width, height)
  return { stroke: Math.max(2, Math.round(side / 400)), font: Math.max(12, Math.round(side / 60)) }
}

/**
 * Draws boxes, landmarks, polygons and labels straight into the pixels of `image` (no copy of
 * the picture, nothing rasterised over all of it) and encodes the JPEG of spec 2.6 `fullPicture`.
 * The image's pixels are changed: call it when nothing reads them any more.
 */
export async function renderOverlay(image: RgbImage, result: DetectionResultCore, jpeg?: JpegSettings): Promise<Buffer> {
  await drawOverlay(image, result)
  let picture = sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
  if (jpeg?.maxSide && Math.max(image.width, image.height) > jpeg.maxSide) picture = picture.resize(jpeg.maxSide, jpeg.maxSide, { fit: 'inside' })
  return picture.jpeg({ ...OVERLAY_JPEG, quality: jpeg?.quality ?? OVERLAY_JPEG.quality }).toBuffer()
}

export async function drawOverlay(image: RgbImage, result: DetectionResultCore): Promise<void> {
  const targets = result.areaList.flatMap((a) => a.targetList)
  const { stroke, font } = overlayScale(image.width, image.height)
  const labels = targets.map(labelOf)
  const glyphs = await glyphsFor(font, labels.join(''))
  const canvas = new Canvas(image)
  for (const t of targets) {
    const colour = t.bLogicResult === false ? BOX_LOGIC_FALSE : BOX
    if (t.maskPolygon.length > 0) {
      const points = t.maskPolygon.map((p) => ({ x: p.xRatio * image.width, y: p.yRatio * image.height }))
      canvas.fillPolygon(points, POLYGON, 0.2)
      for (let i = 0; i < points.length; i++) canvas.line(points[i]!, points[(i + 1) % points.length]!, stroke, POLYGON)
    }
    canvas.strokeRect(t.box, stroke, colour)
    // Landmarks are in pixels under the xRatio/yRatio keys (spec 2.6, result.ts).
    for (const p of t.landmark) canvas.disc(p.xRatio, p.yRatio, stroke * 1.5, LANDMARK)
  }
  // Labels last, so that no box or landmark covers one.
  targets.forEach((t, i) => canvas.label(labels[i]!, t, glyphs, t.bLogicResult === false ? BOX_LOGIC_FALSE : BOX))
}

const labelOf = (t: Target) => t.confidence.map((c) => `${c.label} ${c.confidence.toFixed(2)}`).join(' · ')

/** Clipped drawing on an RGB image, in place. */
class Canvas {
  readonly #data: Buffer
  readonly #width: number
  readonly #height: number

  constructor(image: RgbImage) {
    this.#data = image.data
    this.#width = image.width
    this.#height = image.height
  }

  /** Fills [x0, x1) × [y0, y1), clipped; `alpha` 1 paints, below blends. */
  fillRect(x0: number, y0: number, x1: number, y1: number, colour: Colour, alpha = 1): void {
    const left = Math.max(0, Math.round(x0)), right = Math.min(this.#width, Math.round(x1))
    const top = Math.max(0, Math.round(y0)), bottom = Math.min(this.#height, Math.round(y1))
    for (let y = top; y < bottom; y++) this.#span(y, left, right, colour, alpha)
  }

  strokeRect(box: { x: number; y: number; width: number; height: number }, stroke: number, colour: Colour): void {
    // Centred on the box's edges, as an SVG stroke is.
    const h = stroke / 2, { x, y, width: w, height: ht } = box
    this.fillRect(x - h, y - h, x + w + h, y + h, colour)
    this.fillRect(x - h, y + ht - h, x + w + h, y + ht + h, colour)
    this.fillRect(x - h, y + h, x + h, y + ht - h, colour)
    this.fillRect(x + w - h, y + h, x + w + h, y + ht - h, colour)
  }

  disc(cx: number, cy: number, r: number, colour: Colour): void {
    for (let y = Math.max(0, Math.ceil(cy - r)); y <= Math.min(this.#height - 1, Math.floor(cy + r)); y++) {
      const dx = Math.sqrt(r * r - (y - cy) ** 2)
      this.#span(y, Math.max(0, Math.ceil(cx - dx)), Math.min(this.#width, Math.floor(cx + dx) + 1), colour, 1)
    }
  }

  /** A segment `stroke` wide: squares stamped along it. */
  line(a: { x: number; y: number }, b: { x: number; y: number }, stroke: number, colour: Colour): void {
    const steps = Math.max(1, Math.ceil(Math.max(Math.abs(b.x - a.x), Math.abs(b.y - a.y))))
    const h = stroke / 2
    for (let i = 0; i <= steps; i++) {
      const x = a.x + ((b.x - a.x) * i) / steps, y = a.y + ((b.y - a.y) * i) / steps
      this.fillRect(x - h, y - h, x + h, y + h, colour)
    }
  }

  /** Even-odd scanline fill, sampled at pixel centres. */
  fillPolygon(points: { x: number; y: number }[], colour: Colour, alpha: number): void {
    const ys = points.map((p) => p.y)
    const top = Math.max(0, Math.floor(Math.min(...ys))), bottom = Math.min(this.#height - 1, Math.ceil(Math.max(...ys)))
    for (let y = top; y <= bottom; y++) {
      const cy = y + 0.5
      const xs: number[] = []
      for (let i = 0; i < points.length; i++) {
        const p = points[i]!, q = points[(i + 1) % points.length]!
        if ((p.y <= cy) !== (q.y <= cy)) xs.push(p.x + ((cy - p.y) * (q.x - p.x)) / (q.y - p.y))
      }
      xs.sort((m, n) => m - n)
      for (let i = 0; i + 1 < xs.length; i += 2)
        this.#span(y, Math.max(0, Math.round(xs[i]!)), Math.min(this.#width, Math.round(xs[i + 1]!)), colour, alpha)
    }
  }

  /**
   * The label on a dark band, inside the picture: above the box when there is room, else
   * below it, else over its top edge; moved left as far as needed to end inside the picture.
   */
  label(text: string, box: { box: { x: number; y: number; width: number; height: number } }, glyphs: GlyphSet, colour: Colour): void {
    if (!text) return
    const pad = Math.max(2, Math.round(glyphs.height * 0.15))
    const cells = [...text]
    const width = cells.reduce((sum, c) => sum + glyphCellWidth(glyphs, c), 0) + 2 * pad
    const height = glyphs.height + 2 * pad
    const { x, y, height: h } = box.box
    let top = y - height
    if (top < 0) top = y + h <= this.#height - height ? y + h : y
    top = Math.max(0, Math.min(this.#height - height, top))
    const left = Math.max(0, Math.min(this.#width - width, x))
    this.fillRect(left, top, left + width, top + height, LABEL_BACKGROUND, 0.65)
    let penX = left + pad
    for (const c of cells) {
      const glyph = glyphs.get(c)
      if (glyph) this.#blit(glyph.coverage, glyph.width, glyphs.height, penX, top + pad, colour)
      penX += glyphCellWidth(glyphs, c)
    }
  }

  /** Blends `colour` through a coverage mask (0–255) at (left, top), clipped. */
  #blit(coverage: Uint8Array, width: number, height: number, left: number, top: number, colour: Colour): void {
    const d = this.#data
    for (let gy = 0; gy < height; gy++) {
      const y = top + gy
      if (y < 0 || y >= this.#height) continue
      for (let gx = 0; gx < width; gx++) {
        const x = left + gx
        const a = coverage[gy * width + gx]!
        if (a === 0 || x < 0 || x >= this.#width) continue
        const o = (y * this.#width + x) * 3
        for (let c = 0; c < 3; c++) d[o + c] = d[o + c]! + (((colour[c]! - d[o + c]!) * a + 127) / 255 | 0)
      }
    }
  }

  #span(y: number, left: number, right: number, colour: Colour, alpha: number): void {
    const d = this.#data
    let o = (y * this.#width + left) * 3
    if (alpha >= 1) {
      for (let x = left; x < right; x++, o += 3) { d[o] = colour[0]; d[o + 1] = colour[1]; d[o + 2] = colour[2] }
      return
    }
    for (let x = left; x < right; x++, o += 3)
      for (let c = 0; c < 3; c++) d[o + c] = d[o + c]! + (colour[c]! - d[o + c]!) * alpha
  }
}
