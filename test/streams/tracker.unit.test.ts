import { describe, expect, it } from 'vitest'
import { IouTracker, type Detection } from '../../runtime/streams/tracker.ts'

const person = (x: number, y: number, width = 100, height = 300): Detection => ({ box: { x, y, width, height }, label: 'person', confidence: 0.8 })
const options = { minIou: 0.2, maxCentreShift: 0.6, confirmHits: 2, leaveAfterMs: 2500, maxPredictMs: 2000 }

describe('IouTracker', () => {
  it('one person walking across, then leaving through the edge while the box shrinks, is one object', () => {
    const tracker = new IouTracker(options)
    const entered: string[] = []
    const left: { id: string; dwell: number }[] = []
    let t = 0
    // Walks right 40 px per analysed frame (IoU with the last box about 0.4).
    for (let x = 100; x <= 600; x += 40, t += 500) {
      const step = tracker.update([person(x, 100)], t)
      entered.push(...step.entered.map((track) => track.id))
      left.push(...step.left.map((track) => ({ id: track.id, dwell: track.lastSeen - track.firstSeen })))
    }
    // At the right edge (768 px) only a sliver stays visible: no overlap, but a near centre.
    for (const width of [60, 25]) {
      const step = tracker.update([person(768 - width, 100, width)], (t += 500))
      entered.push(...step.entered.map((track) => track.id))
    }
    left.push(...tracker.update([], (t += 3000)).left.map((track) => ({ id: track.id, dwell: track.lastSeen - track.firstSeen })))
    expect(entered).toEqual(['1'])
    expect(left).toEqual([{ id: '1', dwell: t - 3000 }])
    expect(tracker.active).toBe(0)
  })

  it('two people apart are two objects; a detection seen once is never an object', () => {
    const tracker = new IouTracker(options)
    expect(tracker.update([person(0, 0), person(500, 0), person(250, 400, 20, 20)], 0).entered).toEqual([])
    const second = tracker.update([person(10, 0), person(490, 0)], 200)
    expect(second.entered.map((track) => track.id)).toEqual(['1', '2'])
    const later = tracker.update([person(20, 0), person(480, 0)], 3000)
    // The one-off detection (id 3) expires without ever being announced.
    expect(later.left).toEqual([])
    expect(tracker.active).toBe(2)
    expect(tracker.clear().map((track) => track.id)).toEqual(['1', '2'])
  })

  it('labels never mix', () => {
    const tracker = new IouTracker(options)
    tracker.update([person(0, 0)], 0)
    const step = tracker.update([{ ...person(0, 0), label: 'dog' }], 100)
    expect(step.entered).toEqual([])
    expect(tracker.active).toBe(2)
  })
})
