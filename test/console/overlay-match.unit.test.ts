/**
 * The live wall's choice of boxes for the frame shown (runtime/console/overlay-match.ts,
 * docs/recording-and-live-view.md "Boxes on the frame shown"), and where their label goes.
 */
import { describe, expect, it } from 'vitest'
import { labelPlace, medianGap, movedTo, resultForFrame, type OverlayResult } from '../../runtime/console/overlay-match.ts'

const result = (mediaTime: number | null, x = 0): OverlayResult => ({ time: 1000 + (mediaTime ?? 0) * 1000, mediaTime, width: 768, height: 432, objects: [{ box: { x, y: 0, width: 10, height: 10 }, label: 'person', confidence: 0.9 }] })

describe('resultForFrame', () => {
  // A camera at 10 fps (0.1 s a frame), a task analysing every frame.
  const every = [0, 0.1, 0.2, 0.3].map((t) => result(t, t * 100))

  it('takes the result of the frame shown, not the newest', () => {
    expect(resultForFrame(every, 0.1, 0.1)).toEqual({ result: every[1], match: 'frame' })
    // A presentation time a little off the sample's (rounding of the time scales) is the same frame.
    expect(resultForFrame(every, 0.204, 0.1)).toEqual({ result: every[2], match: 'frame' })
  })

  it('holds the task\'s last result over frames it skipped, for at most its own interval and a half', () => {
    // A task at 5 fps on the 10 fps camera: results at 0, 0.2, 0.4.
    const half = [0, 0.2, 0.4].map((t) => result(t))
    expect(resultForFrame(half, 0.3, 0.1)).toEqual({ result: half[1], match: 'held' })
    expect(resultForFrame(half, 0.7, 0.1)).toEqual({ result: half[2], match: 'held' })
    expect(resultForFrame(half, 0.75, 0.1)).toEqual({ result: null, match: 'none' })
  })

  it('draws nothing before the first result of a frame shown, nor from results without a place in the video', () => {
    expect(resultForFrame(every, -0.2, 0.1)).toEqual({ result: null, match: 'none' })
    expect(resultForFrame([result(null), result(null)], 0.1, 0.1)).toEqual({ result: null, match: 'none' })
    expect(resultForFrame([], 0.1, 0.1)).toEqual({ result: null, match: 'none' })
  })

  it('a frame is never matched to a result of the next frame', () => {
    // The result for 0.3 has not come yet: 0.2's is held, never a later frame's.
    expect(resultForFrame(every.slice(0, 3), 0.3, 0.1)).toEqual({ result: every[2], match: 'held' })
  })
})

describe('movedTo', () => {
  it('moves each box of a held result as far as its object moves by the frame shown; one without a velocity stays', () => {
    const held: OverlayResult = {
      time: 1000, mediaTime: 0.2, width: 768, height: 432,
      objects: [
        { box: { x: 100, y: 50, width: 40, height: 120 }, label: 'person', confidence: 0.9, velocity: { x: 120, y: -10 } },
        { box: { x: 400, y: 60, width: 40, height: 120 }, label: 'person', confidence: 0.8 },
      ],
    }
    // Two frames of a 10 fps camera later: 0.2 s × 120 px/s = 24 px right, 2 px up.
    const moved = movedTo(held, 0.4)
    expect(moved.objects[0]!.box.x).toBeCloseTo(124, 6)
    expect(moved.objects[0]!.box.y).toBeCloseTo(48, 6)
    expect(moved.objects[0]!.box).toMatchObject({ width: 40, height: 120 })
    expect(moved.objects[1]).toEqual(held.objects[1])
    // Its own frame, an earlier one, or a result without a place in the video: unmoved.
    expect(movedTo(held, 0.2)).toBe(held)
    expect(movedTo(held, 0.1)).toBe(held)
    expect(movedTo({ ...held, mediaTime: null }, 0.4).objects).toEqual(held.objects)
  })
})

describe('medianGap', () => {
  it('is the median of the positive gaps', () => {
    expect(medianGap([0, 0.1, 0.2, 0.5, 0.6])).toBeCloseTo(0.1, 9)
    expect(medianGap([1])).toBeNull()
  })
})

describe('labelPlace', () => {
  it('puts the label under the box, never on its top edge (a person\'s head)', () => {
    expect(labelPlace({ x: 10, y: 0, width: 50, height: 100 }, 12, 400)).toEqual({ x: 10, y: 114 })
  })
  it('inside the box\'s bottom when the box reaches the picture\'s bottom', () => {
    expect(labelPlace({ x: 10, y: 300, width: 50, height: 95 }, 12, 400)).toEqual({ x: 10, y: 392 })
  })
})
