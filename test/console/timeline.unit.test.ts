import { describe, expect, it } from 'vitest'
import { clipAt, dayRange, markerStart, offsetIn, percentOf, viewRange } from '../../runtime/console/timeline.ts'

const clip = (clipId: string, kind: string, startTime: number, endTime: number, eventIds: number[] = []) =>
  ({ clipId, kind, startTime, endTime, events: eventIds.map((eventId) => ({ eventId, eventKind: 'alarm.raised' })) })

describe('the Recordings timeline (docs/console-and-cli.md "Recordings")', () => {
  const clips = [clip('cont', 'continuous', 0, 300_000), clip('a', 'event', 10_000, 40_000, [1, 2]), clip('b', 'event', 30_000, 60_000, [3]), clip('later', 'event', 400_000, 420_000)]

  it('plays the clip of the marker\'s event, else an event clip, else a continuous one, else the next footage', () => {
    expect(clipAt(clips, 35_000, 3)?.clipId).toBe('b')
    expect(clipAt(clips, 35_000, 2)?.clipId).toBe('a')
    expect(clipAt(clips, 35_000)?.clipId).toBe('a')
    expect(clipAt(clips, 100_000)?.clipId).toBe('cont')
    expect(clipAt(clips, 350_000)?.clipId).toBe('later')
    expect(clipAt(clips, 500_000)).toBeNull()
    // The end is not in the clip.
    expect(clipAt([clips[1]!], 40_000)).toBeNull()
    expect([offsetIn(clips[1]!, 12_500), offsetIn(clips[1]!, 5000)]).toEqual([2.5, 0])
  })

  it('a marker plays from the pre-roll that applies: the policy clip action\'s for its alarms, else the camera\'s', () => {
    const camera = { preRollSeconds: 4, postRollSeconds: 3 }
    const policy = (id: string) => (id === 'p' ? { preRollSeconds: 6, postRollSeconds: 7 } : null)
    const at = '2026-01-01T10:00:00.000Z', t = Date.parse(at)
    expect(markerStart({ id: 1, kind: 'alarm.raised', time: at, payload: { policyId: 'p' } }, camera, policy)).toBe(t - 6000)
    expect(markerStart({ id: 2, kind: 'alarm.raised', time: at, payload: { policyId: 'q' } }, camera, policy)).toBe(t - 4000)
    expect(markerStart({ id: 3, kind: 'object.entered', time: at, payload: { policyId: 'p' } }, camera, policy)).toBe(t - 4000)
  })

  it('a day is local midnight to midnight; the bar fits the day\'s footage with a margin, within the day', () => {
    const day = dayRange('2026-03-10')!
    expect([new Date(day.from).getHours(), new Date(day.from).getDate(), new Date(day.to).getDate()]).toEqual([0, 10, 11])
    expect([dayRange('2026-3-10'), dayRange('')]).toEqual([null, null])
    const inDay = clips.map((c) => ({ ...c, startTime: c.startTime + day.from + 3_600_000, endTime: c.endTime + day.from + 3_600_000 }))
    const fitted = viewRange(day, inDay, [], true)
    // 420 s of footage: a minute's margin each side (a twentieth is 21 s).
    expect([fitted.from - day.from, fitted.to - day.from]).toEqual([3_600_000 - 60_000, 3_600_000 + 420_000 + 60_000])
    expect(viewRange(day, inDay, [], false)).toEqual(day)
    expect(viewRange(day, [], [], true)).toEqual(day)
    expect(viewRange(day, [{ ...inDay[0]!, startTime: day.from + 1000 }], [], true).from).toBe(day.from)
    expect([percentOf({ from: 0, to: 200 }, 50), percentOf({ from: 0, to: 200 }, -5), percentOf({ from: 0, to: 200 }, 500)]).toEqual([25, 0, 100])
  })
})
