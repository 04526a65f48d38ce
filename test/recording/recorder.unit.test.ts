import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CameraRecorder, type ClipJob, type RecorderSettings } from '../../runtime/recording/recorder.ts'
import type { Segment, Segmenter } from '../../runtime/recording/segmenter.ts'
import { createLogger } from '../../runtime/log.ts'

const SEGMENT_MS = 2000
let now = 0
const timing = { segmentSeconds: SEGMENT_MS / 1000, maxClipSeconds: 60, continuousChunkSeconds: 6, graceMs: 30_000, now: () => now }
const log = createLogger('silent')
const segmenter = { start() {}, async stop() {}, async restart() {} } as unknown as Segmenter

describe('a camera recorder: which segments make a clip, and when', () => {
  let dir: string
  let jobs: ClipJob[]
  let seq: number
  /** Wall-clock origin; `now` follows the segments, as a camera's time does. */
  const t0 = 1_000_000
  /** Waits for the recorder's write-and-trim round, whatever the machine's load. */
  const settle = (r: CameraRecorder) => r.idle()
  let abandoned: string[]
  const recorder = (settings: RecorderSettings) => new CameraRecorder('cam', settings, segmenter, timing, { write: async (job) => { jobs.push(job) }, abandoned: (clipId) => abandoned.push(clipId) }, log)
  /** Segments covering [from, to) ms after t0, 2 s each. */
  const feed = async (r: CameraRecorder, from: number, to: number) => {
    for (let at = from; at < to; at += SEGMENT_MS) {
      const file = path.join(dir, `${++seq}.mp4`)
      writeFileSync(file, 'x'.repeat(100))
      const segment: Segment = { seq, file, wallStart: t0 + at, wallEnd: t0 + at + SEGMENT_MS, bytes: 100 }
      now = segment.wallEnd + 50
      r.onSegment(segment)
      await settle(r)
    }
  }
  const span = (job: ClipJob) => [job.segments[0]!.wallStart - t0, job.segments.at(-1)!.wallEnd - t0]

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'recorder-unit-'))
    jobs = []
    abandoned = []
    seq = 0
    now = t0
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  it('an object\'s visit: from the segment holding entry − pre-roll to the one holding leaving + post-roll, once recorded that far', async () => {
    const r = recorder({ mode: 'events', preRollSeconds: 3, postRollSeconds: 2 })
    await feed(r, 0, 10_000)
    r.entered({ id: 7, kind: 'object.entered', taskId: 't', objectId: 'o' }, t0 + 10_000)
    await feed(r, 10_000, 20_000)
    r.left('t', 'o', t0 + 19_000)
    await settle(r)
    // Recorded to 20 s: the post-roll (to 21 s, and the half-second margin) is not there yet.
    expect(jobs).toEqual([])
    await feed(r, 20_000, 22_000)
    expect(jobs).toHaveLength(1)
    // Entry at 10 s − 3 s − 0.5 s margin lies in the segment [6, 8); leaving + 2 s + margin in [20, 22).
    expect(span(jobs[0]!)).toEqual([6000, 22_000])
    expect(jobs[0]).toMatchObject({ cameraId: 'cam', kind: 'event', event: { id: 7, taskId: 't', objectId: 'o' } })
    // The same visit does not give a second clip.
    await feed(r, 24_000, 30_000)
    expect(jobs).toHaveLength(1)
  })

  it('an alarm: its pre- and post-roll around it; a visit longer than the longest clip is closed at that length', async () => {
    const r = recorder({ mode: 'events', preRollSeconds: 4, postRollSeconds: 4 })
    await feed(r, 0, 10_000)
    r.alarm({ id: 9, kind: 'alarm.raised', taskId: null, objectId: null }, t0 + 10_000)
    await feed(r, 10_000, 16_000)
    expect(jobs.map(span)).toEqual([[4000, 16_000]])

    // A visit that started 61 s ago and goes on: closed at 60 s after its entry.
    const long = recorder({ mode: 'events', preRollSeconds: 0, postRollSeconds: 0 })
    jobs = []
    long.entered({ id: 10, kind: 'object.entered', taskId: 't', objectId: 'stays' }, t0)
    await feed(long, 0, 62_000)
    expect(jobs.map(span)).toEqual([[0, 62_000]])
  })

  it('keeps the ring to what pre-roll and waiting clips need, deleting older segment files', async () => {
    const r = recorder({ mode: 'events', preRollSeconds: 2, postRollSeconds: 0 })
    await feed(r, 0, 40_000)
    // Pre-roll 2 s + two segments + 5 s: segments ending before 11 s ago are gone.
    const kept = r.ring.map((s) => s.wallStart - t0)
    expect(kept[0]).toBe(28_000)
    expect(existsSync(path.join(dir, '1.mp4'))).toBe(false)
    expect(existsSync(path.join(dir, `${seq}.mp4`))).toBe(true)
    expect(r.ringBytes).toBe(kept.length * 100)
  })

  it('a promised clip no video covers is given up on after the grace time; one still waiting when recording stops, at the stop', async () => {
    const r = recorder({ mode: 'events', preRollSeconds: 0, postRollSeconds: 0 })
    await feed(r, 0, 4000)
    // An alarm at 20 s with 2 s of post-roll: the camera recorded nothing after 4 s.
    r.clipFor('offline', { id: null, kind: 'alarm.raised', taskId: null, objectId: null }, t0 + 20_000, 1, 2)
    now = t0 + 22_000 + timing.graceMs - 1
    r.tick()
    await settle(r)
    expect(abandoned).toEqual([])
    now = t0 + 22_000 + timing.graceMs
    r.tick()
    await settle(r)
    expect([abandoned, jobs]).toEqual([['offline'], []])

    r.clipFor('stopped', { id: null, kind: 'alarm.raised', taskId: null, objectId: null }, now, 1, 2)
    await r.stop()
    expect(abandoned).toEqual(['offline', 'stopped'])
  })

  it('one clip per object: a visit and the alarms raised on it are one clip covering the union of their rolls', async () => {
    const r = recorder({ mode: 'events', preRollSeconds: 3, postRollSeconds: 2 })
    await feed(r, 0, 10_000)
    const entered = { id: 1, kind: 'object.entered', taskId: 't', objectId: 'o' }
    r.entered(entered, t0 + 10_000)
    await feed(r, 10_000, 14_000)
    // The camera's alarm at 13 s (rolls 3 s / 2 s), and a policy's clip at 14 s with its own −6 s / +12 s.
    r.alarm({ id: 2, kind: 'alarm.raised', taskId: 't', objectId: 'o' }, t0 + 13_000)
    r.clipFor('promised', { id: null, kind: 'alarm.raised', taskId: 't', objectId: 'o' }, t0 + 14_000, 6, 12)
    expect(r.linkClip('promised', 3)).toBe(true)
    // An alarm on another object of the same task, and one on no single object: clips of their own.
    r.alarm({ id: 4, kind: 'alarm.raised', taskId: 't', objectId: 'other' }, t0 + 14_000)
    r.alarm({ id: 5, kind: 'alarm.raised', taskId: null, objectId: null }, t0 + 14_000)
    await feed(r, 14_000, 20_000)
    // The policy's promised clip waits for the object to leave.
    expect(r.waitingFor('promised')).toBeNull()
    r.left('t', 'o', t0 + 19_000)
    expect(r.waitingFor('promised')).toBe(t0 + 26_000)
    // Left at 19 s + 2 s = 21 s, but the policy's clip runs to 14 + 12 = 26 s: written once recorded past 26.5 s.
    await feed(r, 20_000, 26_000)
    const ofObject = () => jobs.filter((j) => j.event?.objectId === 'o')
    expect(ofObject()).toEqual([])
    await feed(r, 26_000, 30_000)
    expect(ofObject()).toHaveLength(1)
    const clip = ofObject()[0]!
    // From the earliest pre-roll (14 − 6 − 0.5 = 7.5 s, in the segment [6, 8)) to 26.5 s (in [26, 28)).
    expect(span(clip)).toEqual([6000, 28_000])
    expect(clip.events.map((e) => [e.id, e.kind])).toEqual([[1, 'object.entered'], [2, 'alarm.raised'], [3, 'alarm.raised']])
    expect(clip.event).toMatchObject({ id: 1, kind: 'object.entered' })
    expect([clip.clipId, clip.aliases]).toEqual(['promised', []])
    expect(r.waitingFor('promised')).toBeUndefined()
    expect(jobs.filter((j) => j.event?.objectId === 'other').map(span)).toEqual([[10_000, 18_000]])
    expect(jobs.filter((j) => j.event?.id === 5).map(span)).toEqual([[10_000, 18_000]])
    expect(jobs).toHaveLength(3)
  })

  it('one clip per object: two promised alarm clips share it (the second an alias); an alarm first, then the visit; the union bounded by the longest clip', async () => {
    const r = recorder({ mode: 'events', preRollSeconds: 2, postRollSeconds: 2 })
    await feed(r, 0, 10_000)
    // An alarm raised before the object's entry was handled waits for the visit to end.
    r.clipFor('a1', { id: null, kind: 'alarm.raised', taskId: 't', objectId: 'o' }, t0 + 10_000, 2, 2)
    r.entered({ id: 1, kind: 'object.entered', taskId: 't', objectId: 'o' }, t0 + 10_000)
    r.clipFor('a2', { id: null, kind: 'alarm.raised', taskId: 't', objectId: 'o' }, t0 + 12_000, 2, 2)
    await feed(r, 10_000, 20_000)
    expect(jobs).toEqual([])
    // 70 s after the first event: past the longest clip (60 s); this alarm keeps a clip of its own.
    r.alarm({ id: 9, kind: 'alarm.raised', taskId: 't', objectId: 'o' }, t0 + 70_000)
    r.left('t', 'o', t0 + 20_000)
    await feed(r, 20_000, 24_000)
    expect(jobs).toHaveLength(1)
    expect(span(jobs[0]!)).toEqual([6000, 24_000])
    expect([jobs[0]!.clipId, jobs[0]!.aliases, jobs[0]!.events.map((e) => e.kind)]).toEqual(['a1', ['a2'], ['alarm.raised', 'object.entered', 'alarm.raised']])
    await feed(r, 24_000, 74_000)
    expect(jobs.map((j) => j.events.map((e) => e.id))).toEqual([[null, 1, null], [9]])
  })

  it('continuous: consecutive clips of the chunk length, each segment in exactly one', async () => {
    const r = recorder({ mode: 'continuous', preRollSeconds: 0, postRollSeconds: 0 })
    await feed(r, 0, 20_000)
    expect(jobs.map(span)).toEqual([[0, 6000], [6000, 12_000], [12_000, 18_000]])
    expect(jobs.every((j) => j.kind === 'continuous' && j.event === null)).toBe(true)
  })
})
