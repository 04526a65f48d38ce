import { describe, expect, it } from 'vitest'
import { IouTracker, predictBox, type Detection } from '../../runtime/streams/tracker.ts'

const person = (x: number, y: number, width = 100, height = 300): Detection => ({ box: { x, y, width, height }, label: 'person', confidence: 0.8 })
const options = { minIou: 0.2, maxCentreShift: 0.6, maxSidesPerSecond: 0.8, maxLateShift: 1.5, confirmHits: 2, leaveAfterMs: 2500, maxPredictMs: 2000 }
const box = ([x, y, width, height]: number[]): Detection => person(x, y, width, height)
/** The track each sighting went to. */
const tracksOf = (tracker: IouTracker, sightings: [number, Detection[]][]) => sightings.map(([t, detections]) => {
  tracker.update(detections, t)
  return tracker.predict(t).filter(({ track }) => track.lastSeen === t).map(({ track }) => track.id)
})

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

  it('between detections a track moves on along its velocity, so a walker seen once a second stays one object', () => {
    // 100 × 100 boxes walking right 80 px per second (0.08 px/ms), seen twice 200 ms apart, then once a second:
    // each sighting lies 80 px from the last (IoU 0.11, centres 80 px apart against 60 allowed).
    // The track each sighting went to.
    const walk = (tracker: IouTracker) => ([[0, 0], [200, 16], [1200, 96], [2200, 176], [3200, 256]] as const).map(([t, x]) => {
      tracker.update([person(x, 0, 100, 100)], t)
      return tracker.predict(t).find(({ track }) => track.lastSeen === t)!.track.id
    })
    const predicting = new IouTracker(options)
    expect(walk(predicting)).toEqual(['1', '1', '1', '1', '1'])
    const [{ track, box }] = predicting.predict(3700)
    expect(track.velocity).toEqual({ x: 0.08, y: 0 })
    expect(box).toEqual({ x: 296, y: 0, width: 100, height: 100 })
    // Without the prediction (and without the allowance for late sightings) every sighting is someone new.
    expect(walk(new IouTracker({ ...options, maxPredictMs: 0, maxSidesPerSecond: 0 }))).toEqual(['1', '1', '2', '3', '4'])
  })

  it('the velocity is smoothed over the sightings, and a track unseen moves on for maxPredictMs at most', () => {
    const tracker = new IouTracker(options)
    tracker.update([person(0, 0)], 0)
    tracker.update([person(20, 10)], 200)
    // Then 20 px right and none down in 200 ms: half the new velocity, half the old.
    tracker.update([person(40, 10)], 400)
    const [{ track }] = tracker.predict(400)
    expect(track.velocity).toEqual({ x: 0.1, y: 0.025 })
    expect(predictBox(track, 1400, 2000)).toEqual({ x: 140, y: 35, width: 100, height: 300 })
    expect(predictBox(track, 9400, 2000)).toEqual({ x: 240, y: 60, width: 100, height: 300 })
  })

  it('the recent velocity is the last step alone: a walker who turned heads back at once', () => {
    const tracker = new IouTracker(options)
    const first = person(100, 0)
    tracker.update([first], 0)
    expect(tracker.trackOf(first)?.recentVelocity).toBeUndefined()
    for (const [x, t] of [[124, 200], [148, 400]] as const) tracker.update([person(x, 0)], t)
    // He turned: 24 px back in 200 ms.
    const back = person(124, 0)
    tracker.update([back], 600)
    const track = tracker.trackOf(back)!
    expect(track.recentVelocity).toEqual({ x: -0.12, y: 0 })
    // The smoothed one is half the step back, half the steps before: as if he stood still.
    expect(track.velocity.x).toBeCloseTo(0, 9)
    expect(tracker.trackOf(person(124, 0))).toBeUndefined()
  })

  // The boxes below are the person detector's on one-by-one-person-detection.mp4 (512 × 288), at the times a loaded
  // detector saw them; the tracker before these rules split each visit in two objects.
  it('a person rising into view from the bottom edge, seen again 800 ms later, is one object: the box grew, its feet stayed', () => {
    const tracker = new IouTracker(options)
    const ids = tracksOf(tracker, [[0, [box([125, 202, 89, 86])]], [200, [box([123, 158, 160, 127])]], [400, [box([147, 111, 187, 176])]], [1200, [box([213, 23, 127, 263])]]])
    // The box grew up and right as the person rose: its velocity (37 px right, 23 px up a frame) carries it to (289, 19), where it
    // overlaps the new box by IoU 0.15 and its centre is 116 px away, past 0.6 of its side; where it was last seen, IoU 0.47.
    expect(ids).toEqual([['1'], ['1'], ['1'], ['1']])
  })

  it('a walker standing, then seen 1.2 s later 150 px on (0.6 of the box\'s height), is one object; 1.6 box heights away 2.2 s later is someone else', () => {
    const walker = new IouTracker(options)
    const sightings: [number, Detection[]][] = [[0, [box([257, 11, 87, 247])]], [400, [box([257, 10, 87, 248])]], [600, [box([257, 10, 87, 248])]], [1000, [box([256, 11, 96, 246])]], [2200, [box([404, 7, 108, 244])]]]
    expect(tracksOf(walker, sightings)).toEqual([['1'], ['1'], ['1'], ['1'], ['1']])
    const far = new IouTracker(options)
    // 0.8 heights a second for 2.2 s would allow 1.76; 1.5 is the most a late sighting may have moved, however late.
    expect(tracksOf(far, [[0, [person(0, 0, 40, 100)]], [200, [person(0, 0, 40, 100)]], [2400, [person(160, 0, 40, 100)]]])).toEqual([['1'], ['1'], ['2']])
  })

  // Boxes from one-by-one-person-detection.mp4 (512 × 288): the first person leaves through the right edge at 19.4 s, the
  // second walks in from the bottom left at 22.9 s; in between the detector looks at the empty room once a second.
  const leaving: [number, Detection[]][] = [[18_700, [box([327, 21, 101, 235])]], [19_000, [box([340, 23, 141, 233])]], [19_400, [box([409, 37, 102, 209])]]]
  const arriving: [number, Detection[]][] = [[22_900, [box([132, 183, 136, 104])]], [23_000, [box([146, 144, 137, 142])]]]

  it('someone walking in 3.5 s after a person left is a new object when a frame in between did not show the person', () => {
    const tracker = new IouTracker(options)
    const left: string[] = []
    const sightings: [number, Detection[]][] = [...leaving, [20_400, []], [21_400, []], ...arriving]
    const ids = sightings.map(([t, detections]) => {
      left.push(...tracker.update(detections, t).left.map((track) => track.id))
      return tracker.predict(t).filter(({ track }) => track.lastSeen === t).map(({ track }) => track.id)
    })
    // 276 px between the centres, within 1.5 of the leaver's 209 px side: the late allowance alone would join them.
    expect(ids).toEqual([['1'], ['1'], ['1'], [], [], ['2'], ['2']])
    expect(left).toEqual(['1'])
  })

  it('a track the detector had no frame for since its last sighting is still looked for after the leave delay', () => {
    // The same sightings with no frame between: nothing says the first person left, and the late allowance applies.
    expect(tracksOf(new IouTracker(options), [...leaving, ...arriving])).toEqual([['1'], ['1'], ['1'], ['1'], ['1']])
  })
})
