/** Face alignment onto a model's keypoint template (runtime/sidecar/pipeline/crop.ts fitSimilarity, warpSimilarity, alignToTemplate). */
import { describe, expect, it } from 'vitest'
import { alignToTemplate, fitSimilarity, warpSimilarity } from '../../runtime/sidecar/pipeline/crop.ts'
import type { RgbImage } from '../../runtime/sidecar/pipeline/rgb-image.ts'

const apply = (t: { a: number; b: number; tx: number; ty: number }, p: { x: number; y: number }) => ({ x: t.a * p.x - t.b * p.y + t.tx, y: t.b * p.x + t.a * p.y + t.ty })

describe('fitSimilarity', () => {
  it('recovers a rotation, scale and shift exactly from four points', () => {
    // 25° turn, × 0.5, shifted by (-30, 12): a = 0.5 cos 25°, b = 0.5 sin 25°.
    const truth = { a: 0.5 * Math.cos(25 * Math.PI / 180), b: 0.5 * Math.sin(25 * Math.PI / 180), tx: -30, ty: 12 }
    const from = [{ x: 100, y: 120 }, { x: 180, y: 118 }, { x: 141, y: 170 }, { x: 140, y: 215 }]
    const fitted = fitSimilarity(from, from.map((p) => apply(truth, p)))
    expect(fitted.a).toBeCloseTo(truth.a, 9)
    expect(fitted.b).toBeCloseTo(truth.b, 9)
    expect(fitted.tx).toBeCloseTo(truth.tx, 6)
    expect(fitted.ty).toBeCloseTo(truth.ty, 6)
  })

  it('gives the least-squares fit when the points do not match exactly', () => {
    // A square onto a square twice as large whose one corner is off by 4 px: scale stays near 2, no turn.
    const from = [{ x: 0, y: 0 }, { x: 10, y: 0 }, { x: 10, y: 10 }, { x: 0, y: 10 }]
    const to = [{ x: 0, y: 0 }, { x: 20, y: 0 }, { x: 24, y: 20 }, { x: 0, y: 20 }]
    const t = fitSimilarity(from, to)
    expect(Math.hypot(t.a, t.b)).toBeGreaterThan(1.9)
    expect(Math.hypot(t.a, t.b)).toBeLessThan(2.2)
    expect(Math.abs(Math.atan2(t.b, t.a))).toBeLessThan(0.1)
  })
})

describe('warpSimilarity', () => {
  it('puts a source pixel where the transform sends it', () => {
    // A grey 200 × 200 image with one white 5 × 5 square centred on (120.5, 80.5).
    const width = 200, height = 200
    const data = Buffer.alloc(width * height * 3, 60)
    for (let y = 78; y <= 82; y++) for (let x = 118; x <= 122; x++) data.fill(255, (y * width + x) * 3, (y * width + x) * 3 + 3)
    const image: RgbImage = { data, width, height }
    const t = { a: 0.8 * Math.cos(0.3), b: 0.8 * Math.sin(0.3), tx: -20, ty: -10 }
    const out = warpSimilarity(image, t, 112, 112)
    expect(out.width).toBe(112)
    expect(out.height).toBe(112)
    let sx = 0, sy = 0, n = 0
    for (let y = 0; y < 112; y++) for (let x = 0; x < 112; x++) if (out.data[(y * 112 + x) * 3]! > 150) { sx += x + 0.5; sy += y + 0.5; n++ }
    const expected = apply(t, { x: 120.5, y: 80.5 })
    expect(n).toBeGreaterThan(0)
    expect(Math.abs(sx / n - expected.x)).toBeLessThan(0.75)
    expect(Math.abs(sy / n - expected.y)).toBeLessThan(0.75)
    // Far from the square the picture keeps the source's grey.
    expect(out.data[0]).toBe(60)
  })
})

describe('alignToTemplate', () => {
  it('draws the face\'s keypoints where the padded template puts them (dlib\'s face chip)', () => {
    // Four white 3 × 3 dots on grey at the places a face of 80 px, turned 20° and shifted,
    // has the template's four points; the chip must show them at (padding + p) / (1 + 2 padding) × 150.
    const template = [[0.22549, 0.21599], [0.75476, 0.21599], [0.490127, 0.515625], [0.490127, 0.80766]] as const
    const turn = 20 * Math.PI / 180, side = 80
    const keypoints = template.map(([x, y]) => ({ x: 200 + side * (x * Math.cos(turn) - y * Math.sin(turn)), y: 90 + side * (x * Math.sin(turn) + y * Math.cos(turn)) }))
    const width = 360, height = 300
    const data = Buffer.alloc(width * height * 3, 60)
    for (const p of keypoints)
      for (let y = Math.round(p.y) - 1; y <= Math.round(p.y) + 1; y++)
        for (let x = Math.round(p.x) - 1; x <= Math.round(p.x) + 1; x++) data.fill(255, (y * width + x) * 3, (y * width + x) * 3 + 3)
    const chip = alignToTemplate({ data, width, height }, keypoints, template, 0.25, 150, 150)
    expect([chip.width, chip.height]).toEqual([150, 150])
    for (const [tx, ty] of template) {
      const ex = ((0.25 + tx) / 1.5) * 150, ey = ((0.25 + ty) / 1.5) * 150
      // Brightest pixel within 6 px of the expected place: the dot landed there (± 1.5 px: rounding of the dots).
      let best = { v: -1, x: 0, y: 0 }
      for (let y = Math.floor(ey) - 6; y <= Math.floor(ey) + 6; y++)
        for (let x = Math.floor(ex) - 6; x <= Math.floor(ex) + 6; x++) {
          const v = chip.data[(y * 150 + x) * 3]!
          if (v > best.v) best = { v, x: x + 0.5, y: y + 0.5 }
        }
      expect(best.v).toBeGreaterThan(150)
      expect(Math.abs(best.x - ex)).toBeLessThan(1.5)
      expect(Math.abs(best.y - ey)).toBeLessThan(1.5)
    }
    // The chip's corner is grey: nothing white away from the points.
    expect(chip.data[0]).toBe(60)
  })
})

describe('alignToTemplate with the box filter (docs/galleries.md "Alignment and measure, measured")', () => {
  // A 1-pixel black and white checkerboard, 900 × 700: its average is grey 127.5 at any scale.
  const width = 900, height = 700
  const data = Buffer.alloc(width * height * 3)
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data.fill((x + y) % 2 ? 255 : 0, (y * width + x) * 3, (y * width + x) * 3 + 3)
  const board: RgbImage = { data, width, height }
  const template: [number, number][] = [[0.2, 0.2], [0.8, 0.2], [0.5, 0.5], [0.5, 0.8]]
  // Template points 396 px apart across onto 60 px of a 150 px chip padded by 0.25: shrink 6.6,
  // so the filter averages ⌊6.6 / 1.5⌋ = 4 × 4 blocks; turned by 10°.
  const turn = 10 * Math.PI / 180, c = Math.cos(turn), s = Math.sin(turn)
  const keypoints = template.map(([x, y]) => ({ x: 450 + 660 * (c * (x - 0.5) - s * (y - 0.5)), y: 350 + 660 * (s * (x - 0.5) + c * (y - 0.5)) }))
  const spread = (img: RgbImage) => { let lo = 255, hi = 0; for (const v of img.data) { lo = Math.min(lo, v); hi = Math.max(hi, v) } return hi - lo }

  it('samples the block averages of the image: a fine pattern far smaller than a chip pixel becomes its average, not an alias', () => {
    const plain = alignToTemplate(board, keypoints, template, 0.25, 150, 150)
    const filtered = alignToTemplate(board, keypoints, template, 0.25, 150, 150, 'box')
    // Bilinear sampling alone picks single checkerboard pixels (black, white, or between).
    expect(spread(plain)).toBeGreaterThan(100)
    // 4 × 4 blocks of a 1-pixel checkerboard average exactly 127.5 → 127 or 128 (rounding).
    expect(spread(filtered)).toBeLessThanOrEqual(1)
    for (const v of filtered.data) expect(Math.abs(v - 127.5)).toBeLessThanOrEqual(0.5)
  })

  it('averages only the blocks under the chip, on the image\'s own grid: the same chip as from the whole image box-averaged', () => {
    // A smooth gradient with a detail, so that a shifted block grid would show.
    const g = Buffer.alloc(width * height * 3)
    for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) { const at = (y * width + x) * 3; g[at] = x % 256; g[at + 1] = y % 256; g[at + 2] = (x * y) % 251 }
    const image: RgbImage = { data: g, width, height }
    const t = fitSimilarity(keypoints, template.map(([x, y]) => ({ x: ((0.25 + x) / 1.5) * 150, y: ((0.25 + y) / 1.5) * 150 })))
    const f = Math.floor(1 / Math.hypot(t.a, t.b) / 1.5)
    expect(f).toBe(4)
    // The whole image averaged over f × f blocks, by hand.
    const cols = Math.floor(width / f), rows = Math.floor(height / f), small = Buffer.alloc(cols * rows * 3)
    for (let y = 0; y < rows; y++) for (let x = 0; x < cols; x++) for (let ch = 0; ch < 3; ch++) {
      let sum = 0
      for (let dy = 0; dy < f; dy++) for (let dx = 0; dx < f; dx++) sum += g[((y * f + dy) * width + x * f + dx) * 3 + ch]!
      small[(y * cols + x) * 3 + ch] = Math.round(sum / (f * f))
    }
    const expected = warpSimilarity({ data: small, width: cols, height: rows }, { ...t, a: t.a * f, b: t.b * f }, 150, 150)
    expect(alignToTemplate(image, keypoints, template, 0.25, 150, 150, 'box').data.equals(expected.data)).toBe(true)
  })

  it('leaves a chip about the face\'s own size as the plain warp does (shrink < 3: no filter)', () => {
    const small = keypoints.map((p) => ({ x: 450 + (p.x - 450) / 3, y: 350 + (p.y - 350) / 3 }))
    expect(alignToTemplate(board, small, template, 0.25, 150, 150, 'box').data.equals(alignToTemplate(board, small, template, 0.25, 150, 150).data)).toBe(true)
  })
})
