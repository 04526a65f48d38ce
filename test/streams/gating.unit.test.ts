import { describe, expect, it } from 'vitest'
import { decide, type TrackedBox } from '../../runtime/streams/gating.ts'
import { MotionDetector, type Motion } from '../../runtime/streams/motion.ts'
import { feed, scene } from './scene.ts'

const settings = { minDetectIntervalMs: 1000, trackedDetectIntervalMs: 600, followWalkers: false }
/** A person standing at x 200–300, y 60–300 (box 100 × 240, so the margin is 25 px × 60 px on each side). */
const PERSON = { x: 200, y: 60, width: 100, height: 240 }
const person: TrackedBox = { box: PERSON, confirmed: true }
const body = { x: 210, y: 70, width: 80, height: 220 }

/** The motion of `next` after a still scene of `before` (the background has settled on it). */
function motionOf(before: Parameters<typeof scene>, next: Parameters<typeof scene>): Motion {
  const detector = new MotionDetector()
  feed(detector, Array.from({ length: 30 }, () => scene(...before)))
  return feed(detector, [scene(...next)], 1000 + 30 * 200)[0]!
}

/** Every reason over a scripted stream of frames 200 ms apart, the detector running whenever the gate says so. */
function script(frames: Uint8Array[], tracked: TrackedBox[], gate = settings): string[] {
  const detector = new MotionDetector()
  let lastDetect = -Infinity
  return frames.map((rgb, i) => {
    const time = 1000 + i * 200
    const decision = decide(detector.detect(rgb, 640, 360, time), tracked, time - lastDetect, gate)
    if (decision.detect) lastDetect = time
    return decision.reason
  })
}

describe('motion gating: when the detector runs', () => {
  it('nothing tracked: on motion, else every minDetectIntervalMs', () => {
    const still = Array.from({ length: 12 }, () => scene())
    // The first frame is all new; then 1000 ms = 5 frames between runs.
    expect(script(still, [])).toEqual(['motion', 'still', 'still', 'still', 'still', 'interval', 'still', 'still', 'still', 'still', 'interval', 'still'])
    const walker = [scene(), scene(), scene({ x: 100, y: 100, width: 40, height: 100 }), scene({ x: 120, y: 100, width: 40, height: 100 }), scene({ x: 120, y: 100, width: 40, height: 100 })]
    // Still frames are no motion; the walker is; once it stops, the background still differs from it.
    expect(script(walker, [])).toEqual(['motion', 'still', 'motion', 'motion', 'motion'])
  })

  it('objects tracked and every motion on them: at most every trackedDetectIntervalMs', () => {
    // The person's arms move on every frame, reaching out of the box (200–300) but not past its margin (175–325).
    const frames = Array.from({ length: 10 }, (_, i) => scene(body, { x: i % 2 ? 260 : 180, y: 120, width: 60, height: 20 }))
    // 600 ms = 3 frames between runs; the first frame is all new, so off the box.
    expect(script(frames, [person])).toEqual(['newMotion', 'tracked', 'tracked', 'interval', 'tracked', 'tracked', 'interval', 'tracked', 'tracked', 'interval'])
  })

  it('counting line crossings, a tracked object that moves as a whole (walks) is followed at the frame rate', () => {
    // A striped body shifting 10 px a frame: every cell of it changes, a region as large as most of the box.
    const stripes = (shift: number) => Array.from({ length: 4 }, (_, k) => ({ x: 210 + shift + 20 * k, y: 70, width: 10, height: 220 }))
    const frames = Array.from({ length: 6 }, (_, i) => scene(...stripes(i % 2 ? 10 : 0)))
    expect(script(frames, [person], { ...settings, followWalkers: true })).toEqual(['newMotion', 'walking', 'walking', 'walking', 'walking', 'walking'])
    // Without counter lines the walker is left to the tracked interval (and the tracker's prediction).
    expect(script(frames, [person])).toEqual(['newMotion', 'tracked', 'tracked', 'interval', 'tracked', 'tracked'])
  })

  it('motion off the tracked boxes runs the detector at once, as much as counts as motion on its own', () => {
    const before: Parameters<typeof scene> = [body]
    // Someone new at x 500: 4 × 8 cells.
    expect(decide(motionOf(before, [body, { x: 500, y: 100, width: 40, height: 80 }]), [person], 0, settings)).toEqual({ detect: true, reason: 'newMotion' })
    // 2 × 3 cells there are noise (fewer than 7); the tracked interval still applies.
    expect(decide(motionOf(before, [body, { x: 500, y: 100, width: 20, height: 30 }]), [person], 0, settings)).toEqual({ detect: false, reason: 'tracked' })
    expect(decide(motionOf(before, [body, { x: 500, y: 100, width: 20, height: 30 }]), [person], 600, settings)).toEqual({ detect: true, reason: 'interval' })
  })

  it('the margin: a quarter of the box on each side covers its motion, beyond it is new', () => {
    const before: Parameters<typeof scene> = [body]
    // x 300–320 lies within the 25 px margin right of the box (300–325); 300–330 reaches past it.
    expect(decide(motionOf(before, [body, { x: 300, y: 100, width: 20, height: 100 }]), [person], 0, settings).reason).toBe('tracked')
    expect(decide(motionOf(before, [body, { x: 300, y: 100, width: 30, height: 100 }]), [person], 0, settings).reason).toBe('newMotion')
  })

  it('a tentative object covers nothing: its motion runs the detector at once, so it is confirmed at the frame rate', () => {
    const motion = motionOf([body], [{ ...body, x: 215 }])
    expect(decide(motion, [person], 0, settings).reason).toBe('tracked')
    expect(decide(motion, [{ ...person, confirmed: false }], 0, settings).reason).toBe('newMotion')
  })

  it('a tracked object without any motion is checked every minDetectIntervalMs when that comes first', () => {
    const gate = { minDetectIntervalMs: 400, trackedDetectIntervalMs: 1000, followWalkers: false }
    const other: TrackedBox = { box: { x: 450, y: 60, width: 100, height: 240 }, confirmed: true }
    // The other person moves; the first shows no motion at all: it may have gone without a trace, or stand still.
    const motion = motionOf([body, { x: 460, y: 70, width: 80, height: 220 }], [body, { x: 470, y: 70, width: 80, height: 220 }])
    expect(decide(motion, [person, other], 200, gate)).toEqual({ detect: false, reason: 'tracked' })
    expect(decide(motion, [person, other], 400, gate)).toEqual({ detect: true, reason: 'stationary' })
    // Both move: the tracked interval alone.
    const both = motionOf([body, { x: 460, y: 70, width: 80, height: 220 }], [{ ...body, x: 215 }, { x: 470, y: 70, width: 80, height: 220 }])
    expect(decide(both, [person, other], 400, gate)).toEqual({ detect: false, reason: 'tracked' })
    expect(decide(both, [person, other], 1000, gate)).toEqual({ detect: true, reason: 'interval' })
  })
})
