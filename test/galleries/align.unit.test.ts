/** Face alignment by the eyes (runtime/sidecar/pipeline/crop.ts alignByEyes). */
import { describe, expect, it } from 'vitest'
import { alignByEyes } from '../../runtime/sidecar/pipeline/crop.ts'
import type { RgbImage } from '../../runtime/sidecar/pipeline/rgb-image.ts'

/** A black image with a white 3 × 3 dot at each point. */
function dots(width: number, height: number, points: { x: number; y: number }[]): RgbImage {
  const data = Buffer.alloc(width * height * 3)
  for (const p of points)
    for (let y = p.y - 1; y <= p.y + 1; y++) for (let x = p.x - 1; x <= p.x + 1; x++) data.fill(255, (y * width + x) * 3, (y * width + x) * 3 + 3)
  return { data, width, height }
}

/** Centre of the bright pixels of each half of the image. */
function brightCentres(image: RgbImage) {
  const halves = [{ x: 0, y: 0, n: 0 }, { x: 0, y: 0, n: 0 }]
  for (let y = 0; y < image.height; y++)
    for (let x = 0; x < image.width; x++)
      if (image.data[(y * image.width + x) * 3]! > 128) {
        const h = halves[x < image.width / 2 ? 0 : 1]!
        h.x += x; h.y += y; h.n++
      }
  return halves.map((h) => ({ x: h.x / h.n, y: h.y / h.n }))
}

describe('alignByEyes', () => {
  it('turns the eyes level, at the eye line, centred, whatever their order and tilt', () => {
    // Eyes 40 px apart, tilted by 30°.
    const a = { x: 100, y: 100 }, b = { x: 100 + Math.round(40 * Math.cos(Math.PI / 6)), y: 100 + Math.round(40 * Math.sin(Math.PI / 6)) }
    const image = dots(240, 240, [a, b])
    for (const [first, second] of [[a, b], [b, a]] as const) {
      const aligned = alignByEyes(image, first, second, 3, 0.4)
      expect(aligned.width).toBe(aligned.height)
      expect(Math.abs(aligned.width - 120)).toBeLessThanOrEqual(1)
      const [left, right] = brightCentres(aligned)
      expect(Math.abs(left!.y - right!.y)).toBeLessThan(1.5)
      expect(Math.abs(left!.y - 0.4 * aligned.height)).toBeLessThan(1.5)
      expect(Math.abs((left!.x + right!.x) / 2 - aligned.width / 2)).toBeLessThan(1.5)
      expect(Math.abs(right!.x - left!.x - 40)).toBeLessThan(2)
    }
  })
})
