import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestInference, type TestInference } from './helpers.ts'
import { renderTextLines } from './images.ts'

const squash = (s: string) => s.replace(/\s+/g, '').toUpperCase()

describe('text detection and recognition (PP-OCRv4) through the sidecar', () => {
  let inf: TestInference
  beforeAll(async () => {
    inf = await startTestInference()
    await inf.inference.load('ocr', 'text-ocr')
  })
  afterAll(async () => { await inf?.close() })

  it('finds each rendered line as a polygon and reads its words', async () => {
    const lines = ['INVOICE 4711', 'Delivery to Berlin', 'Total 93.50 EUR']
    const png = await renderTextLines(lines)
    const { width, height } = await sharp(png).metadata()
    const { result } = await inf.inference.detect({ handle: 'ocr', image: { kind: 'bytes', bytes: png } })
    const targets = result.areaList.flatMap((a) => a.targetList)
    expect(targets).toHaveLength(lines.length)
    for (const [i, line] of lines.entries()) {
      const t = targets[i]!
      expect(t.confidence[0]!.label).toBe('text')
      // The recognized text is a label of its own in confidence[] (spec 2.6).
      const read = t.confidence[1]!
      expect(squash(read.label)).toBe(squash(line))
      expect(read.confidence).toBeGreaterThan(0.8)
      // maskPolygon: normalized outline around the line (4 corners of the rotated rectangle).
      expect(t.maskPolygon).toHaveLength(4)
      for (const p of t.maskPolygon) {
        expect(p.xRatio).toBeGreaterThanOrEqual(0); expect(p.xRatio).toBeLessThanOrEqual(1)
        expect(p.yRatio).toBeGreaterThanOrEqual(0); expect(p.yRatio).toBeLessThanOrEqual(1)
      }
      // The line's baseline (y = 90 + i·110) lies within its polygon's vertical extent.
      const ys = t.maskPolygon.map((p) => p.yRatio * height!)
      expect(Math.min(...ys)).toBeLessThan(90 + i * 110)
      expect(Math.max(...ys)).toBeGreaterThan(90 + i * 110 - 10)
      expect(t.box.x).toBeGreaterThanOrEqual(0)
      expect(t.box.x + t.box.width).toBeLessThanOrEqual(width!)
    }
  })

  it('reads upside-down text after the direction classifier turns the line', async () => {
    const png = await renderTextLines(['PARKING LOT 7 OPEN'], { rotate180: true })
    const { result } = await inf.inference.detect({ handle: 'ocr', image: { kind: 'bytes', bytes: png }, overlay: false })
    const targets = result.areaList.flatMap((a) => a.targetList)
    expect(targets).toHaveLength(1)
    expect(squash(targets[0]!.confidence[1]!.label)).toBe('PARKINGLOT7OPEN')
  })

  it('returns no target for a blank image', async () => {
    const blank = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#ffffff' } }).png().toBuffer()
    const { result } = await inf.inference.detect({ handle: 'ocr', image: { kind: 'bytes', bytes: blank } })
    expect(result.areaList).toEqual([{ areaId: '0', areaName: 'default', bDetected: false, targetList: [] }])
  })
})
