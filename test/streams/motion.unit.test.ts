import { describe, expect, it } from 'vitest'
import { MotionDetector } from '../../runtime/streams/motion.ts'
import { feed, scene } from './scene.ts'

describe('MotionDetector: whether and where', () => {
  it('the first frame is all new; an unchanged scene is no motion, with no regions', () => {
    const [first, ...rest] = feed(new MotionDetector(), [scene(), scene(), scene()])
    expect(first).toEqual({ moved: true, regions: [{ box: { x: 0, y: 0, width: 640, height: 360 }, cells: 64 * 36 }], minCells: 7 })
    for (const motion of rest) expect(motion).toEqual({ moved: false, regions: [], minCells: 7 })
  })

  it('each object that appears is one region, in frame pixels, largest first', () => {
    const detector = new MotionDetector()
    feed(detector, [scene(), scene()])
    // 6 × 8 cells at x 100–160, y 50–130; 2 × 3 cells at x 500–520, y 300–330.
    const [motion] = feed(detector, [scene({ x: 100, y: 50, width: 60, height: 80 }, { x: 500, y: 300, width: 20, height: 30 })])
    expect(motion).toEqual({
      moved: true, minCells: 7,
      regions: [{ box: { x: 100, y: 50, width: 60, height: 80 }, cells: 48 }, { box: { x: 500, y: 300, width: 20, height: 30 }, cells: 6 }],
    })
  })

  it('changes inside a motion mask are no motion and no region; outside it they are', () => {
    // The mask covers x 0.1–0.3, y 0–0.5 of the 640 × 360 picture: x 64–192, y 0–180 (grid cells of 10 px, centres inside).
    const detector = new MotionDetector().mask([[{ xRatio: 0.1, yRatio: 0 }, { xRatio: 0.3, yRatio: 0 }, { xRatio: 0.3, yRatio: 0.5 }, { xRatio: 0.1, yRatio: 0.5 }]])
    feed(detector, [scene(), scene()])
    const [inside] = feed(detector, [scene({ x: 100, y: 50, width: 60, height: 80 })])
    expect(inside).toEqual({ moved: false, regions: [], minCells: 7 })
    const [both] = feed(detector, [scene({ x: 100, y: 50, width: 60, height: 80 }, { x: 300, y: 200, width: 60, height: 80 })])
    expect(both).toEqual({ moved: true, minCells: 7, regions: [{ box: { x: 300, y: 200, width: 60, height: 80 }, cells: 48 }] })
    // No masks: the same change inside is motion again.
    const unmasked = new MotionDetector().mask([])
    feed(unmasked, [scene(), scene()])
    expect(feed(unmasked, [scene({ x: 100, y: 50, width: 60, height: 80 })])[0]!.regions).toEqual([{ box: { x: 100, y: 50, width: 60, height: 80 }, cells: 48 }])
  })

  it('cells touching at a corner are one region', () => {
    const detector = new MotionDetector()
    feed(detector, [scene(), scene()])
    const [motion] = feed(detector, [scene({ x: 100, y: 100, width: 20, height: 20 }, { x: 120, y: 120, width: 20, height: 20 })])
    expect(motion!.regions).toEqual([{ box: { x: 100, y: 100, width: 40, height: 40 }, cells: 8 }])
  })

  it('an object that stops still differs from the background but is no region; moving on, only its edges are', () => {
    const detector = new MotionDetector()
    feed(detector, [scene(), scene()])
    const square = { x: 100, y: 50, width: 60, height: 80 }
    const [appears, stands, movesOn] = feed(detector, [scene(square), scene(square), scene({ ...square, x: 120 })])
    expect(appears!.regions).toHaveLength(1)
    // The background has not caught up yet: the frame still moved, but nothing changed since the last one.
    expect(stands).toEqual({ moved: true, regions: [], minCells: 7 })
    // 20 px to the right: the two columns it left and the two it reached, not its trail nor its middle.
    expect(movesOn).toEqual({
      moved: true, minCells: 7,
      regions: [{ box: { x: 100, y: 50, width: 20, height: 80 }, cells: 16 }, { box: { x: 160, y: 50, width: 20, height: 80 }, cells: 16 }],
    })
  })

  it('fewer changed cells than 0.3 % of the grid are no motion, though they are a region', () => {
    const detector = new MotionDetector()
    feed(detector, [scene(), scene()])
    // 2 × 3 cells: 6 < 7.
    const [motion] = feed(detector, [scene({ x: 300, y: 200, width: 20, height: 30 })])
    expect(motion).toEqual({ moved: false, regions: [{ box: { x: 300, y: 200, width: 20, height: 30 }, cells: 6 }], minCells: 7 })
  })

  it('a change of 20 grey levels or less is no motion', () => {
    const detector = new MotionDetector()
    feed(detector, [scene(), scene()])
    const lighter = new Uint8Array(640 * 360 * 3).fill(70)
    expect(feed(detector, [lighter])[0]).toEqual({ moved: false, regions: [], minCells: 7 })
  })
})
