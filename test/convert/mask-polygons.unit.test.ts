/** Mask → polygons on synthetic masks, and on the converted selfie model over a sample photo. */
import { join } from 'node:path'
import * as ort from 'onnxruntime-node'
import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import { resolveModelJson } from '../../models/convert/build-models.ts'
import { convertTfGraph } from '../../models/convert/convert.ts'
import { modelSources } from '../../models/convert/sources.ts'
import { loadTfGraph } from '../../models/convert/tfjs-graph.ts'
import { maskPolygons } from '../../models/segment/mask-polygons.ts'

const root = join(import.meta.dirname, '../..')

function maskWith(width: number, height: number, inside: (x: number, y: number) => boolean): Float32Array {
  const m = new Float32Array(width * height)
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) m[y * width + x] = inside(x, y) ? 1 : 0
  return m
}

const bbox = (points: [number, number][]) => ({
  x1: Math.min(...points.map((p) => p[0])),
  y1: Math.min(...points.map((p) => p[1])),
  x2: Math.max(...points.map((p) => p[0])),
  y2: Math.max(...points.map((p) => p[1])),
})

describe('maskPolygons', () => {
  it('traces a filled rectangle as one polygon of about its area and extent', () => {
    const polygons = maskPolygons(maskWith(100, 50, (x, y) => x >= 20 && x < 60 && y >= 10 && y < 40), 100, 50)
    expect(polygons).toHaveLength(1)
    expect(polygons[0]!.area).toBeCloseTo((40 * 30) / (100 * 50), 1)
    const box = bbox(polygons[0]!.points)
    expect(box.x1).toBeCloseTo(0.2, 1)
    expect(box.x2).toBeCloseTo(0.6, 1)
    expect(box.y1).toBeCloseTo(0.2, 1)
    expect(box.y2).toBeCloseTo(0.8, 1)
    // simplified: a rectangle needs few points, not one per boundary pixel
    expect(polygons[0]!.points.length).toBeLessThan(20)
  })

  it('gives separate regions separate polygons, largest first, and drops specks', () => {
    const polygons = maskPolygons(
      maskWith(100, 100, (x, y) => (x < 30 && y < 30) || (x >= 60 && x < 80 && y >= 60 && y < 80) || (x === 95 && y === 5)),
      100,
      100,
    )
    expect(polygons).toHaveLength(2)
    expect(polygons[0]!.area).toBeGreaterThan(polygons[1]!.area)
  })

  it('finds nothing in an empty mask and rejects a mask of the wrong size', () => {
    expect(maskPolygons(new Float32Array(64), 8, 8)).toEqual([])
    expect(() => maskPolygons(new Float32Array(10), 8, 8)).toThrow(RangeError)
  })

  it('outlines the people of a sample photo with the converted selfie model', async () => {
    const source = modelSources.find((s) => s.name === 'selfie')!
    const session = await ort.InferenceSession.create(convertTfGraph(await loadTfGraph(resolveModelJson(source, root)), 'selfie').onnx)
    const rgb = await sharp(join(root, 'node_modules/@vladmandic/face-api/demo/sample6.jpg')).resize(256, 256, { fit: 'fill' }).removeAlpha().raw().toBuffer()
    const input = new ort.Tensor('float32', Float32Array.from(rgb, (v) => v / 255), [1, 256, 256, 3])
    const mask = (await session.run({ input_1: input })).activation_10!
    await session.release()

    const polygons = maskPolygons(mask.data as Float32Array, 256, 256)
    expect(polygons.length).toBeGreaterThan(0)
    for (const p of polygons) for (const [x, y] of p.points) expect(x >= 0 && x <= 1 && y >= 0 && y <= 1).toBe(true)
    // sample6: four people standing side by side fill much of the frame, from top third to the bottom edge
    const largest = bbox(polygons[0]!.points)
    expect(polygons[0]!.area).toBeGreaterThan(0.2)
    expect(largest.y2).toBeGreaterThan(0.95)
    expect(largest.x2 - largest.x1).toBeGreaterThan(0.5)
  })
})
