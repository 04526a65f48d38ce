import { readFileSync } from 'node:fs'
import { eq } from 'drizzle-orm'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AlarmActions } from '../../runtime/alarms/actions.ts'
import { AlarmPictures } from '../../runtime/alarms/pictures.ts'
import { AlarmRaiser, type AlarmRequest } from '../../runtime/alarms/raiser.ts'
import type { CameraService } from '../../runtime/cameras/service.ts'
import { Snapshots } from '../../runtime/streams/snapshots.ts'
import type { Track } from '../../runtime/streams/tracker.ts'
import { events } from '../../shared/db/schema/index.ts'
import type { ClipRecorder, ClipRequest } from '../../shared/recording/clip-recorder.ts'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'
import { until } from '../helpers/processes.ts'

/** A grey 64×48 frame with one object in it. */
const frame = { rgb: Buffer.alloc(64 * 48 * 3, 128), width: 64, height: 48, source: { width: 64, height: 48 }, time: Date.parse('2026-03-02T08:00:00Z'), at: 1_000 }
const person: Track = { id: '7', label: 'person', confidence: 0.9, box: { x: 8, y: 4, width: 20, height: 40 }, areaId: 'door', firstSeen: frame.time - 5000, lastSeen: frame.time, hits: 25, confirmed: true, velocity: { x: 0, y: 0 } }

// The one producer of alarm.raised, on real services: the snapshot kept, the clip asked of the recording area.
describe('raising an alarm (spec 4.10 Linkage / alarm policy)', () => {
  let t: TestRuntime
  let recorder: ClipRecorder | null = null
  const asked: ClipRequest[] = []
  let raiser: AlarmRaiser
  let actions: AlarmActions

  beforeAll(async () => {
    t = await createTestRuntime()
    await t.runtime.start()
    const s = t.runtime.services
    actions = new AlarmActions({ log: s.log, events: s.events, publish: async () => {}, audio: s.audio })
    raiser = new AlarmRaiser({
      db: s.db, log: s.log, events: s.events, actions, recorder: () => recorder,
      snapshots: new Snapshots({ cameras: s.cameras as CameraService, imageQuality: s.imageQuality, log: s.log, fullResolution: true }),
      pictures: new AlarmPictures(t.config.dataPath, '', t.config.eventRetentionMs),
    })
  })
  afterAll(async () => {
    await actions.stop()
    await t.close()
  })

  const request = (policy: AlarmRequest['policy']): AlarmRequest => ({ alarmType: 'policy', policy, taskId: 'door-task', cameraId: 'cam-1', frame, objects: [person], dwellMs: 5000 })
  const payloadOf = async (id: number) => JSON.parse((await t.runtime.services.db.select().from(events).where(eq(events.id, id)))[0]!.payload)

  it('keeps the snapshot with the alarm and puts the recorder\'s clip URL in it', async () => {
    recorder = { records: () => true, recordEvent: async (r) => { asked.push(r); return { clipUrl: `/gtw/cwai/File/Clip?id=${r.eventId}` } } }
    const policy = { policyId: 'p-1', policyName: 'door loitering', actions: [{ type: 'clip' as const, preRollS: 4 }] }
    const id = await raiser.raise(request(policy))
    const payload = await payloadOf(id)
    expect(payload).toMatchObject({
      taskId: 'door-task', cameraId: 'cam-1', alarmType: 'policy', policyId: 'p-1', policyName: 'door loitering', objectId: '7', objectIds: ['7'],
      label: 'person', areaId: 'door', count: 1, dwellMs: 5000, box: person.box, message: 'door loitering: person in door for 5 s',
      snapshotUrl: `/gtw/cwai/Event/AlarmPicture?id=${payload.alarmId}`, imageUrl: `/gtw/cwai/Event/AlarmPicture?id=${payload.alarmId}`,
      clipUrl: `/gtw/cwai/File/Clip?id=${payload.alarmId}`, personId: null, name: null, galleryId: null, similarity: null,
      // The frame was analysed at the camera's own size: the snapshot is that frame.
      snapshotWidth: 64, snapshotHeight: 48, snapshotFullResolution: true, snapshotSkewMs: 0, snapshotFallback: null,
    })
    // The alarm is on one object: the recorder is told which, so that it shares the object's clip.
    expect(asked).toEqual([{ cameraId: 'cam-1', eventId: payload.alarmId, preRollS: 4, postRollS: 10, at: frame.time, taskId: 'door-task', objectId: '7' }])
    const jpeg = readFileSync(await t.runtime.services.alarms.picture(payload.alarmId))
    expect(await sharp(jpeg).metadata()).toMatchObject({ format: 'jpeg', width: 64, height: 48 })
    // The box is drawn in red on the grey frame.
    const { data } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true })
    const redness = (x: number, y: number) => data[(y * 64 + x) * 3]! - data[(y * 64 + x) * 3 + 1]!
    expect(redness(8, 24)).toBeGreaterThan(60)
    expect(Math.abs(redness(40, 24))).toBeLessThan(10)
  })

  it('names the person the task\'s recognition saw (a stranger as "unknown")', async () => {
    recorder = null
    const named = { ...person, label: 'face', recognition: { name: 'Alice', personId: 'p1', galleryId: 'staff', similarity: 0.82 } }
    const policy = { policyId: 'p-3', policyName: 'watch list', actions: [] }
    const alice = await payloadOf(await raiser.raise({ ...request(policy), objects: [named] }))
    expect(alice).toMatchObject({ personId: 'p1', name: 'Alice', galleryId: 'staff', similarity: 0.82, message: 'watch list: face Alice in door for 5 s' })
    const stranger = { ...named, recognition: { name: 'unknown', personId: null, galleryId: null, similarity: 0.41 } }
    expect(await payloadOf(await raiser.raise({ ...request(policy), objects: [stranger] })))
      .toMatchObject({ personId: null, name: 'unknown', galleryId: null, similarity: 0.41, message: 'watch list: face unknown in door for 5 s' })
  })

  it('an alarm stands when its clip cannot be had: no clipUrl, and an alarm.actionFailed naming the clip', async () => {
    recorder = { records: () => false, recordEvent: async () => { throw new Error('camera cam-1 records nothing') } }
    const id = await raiser.raise(request({ policyId: 'p-2', policyName: 'p2', actions: [{ type: 'clip' }] }))
    expect((await payloadOf(id)).clipUrl).toBeNull()
    const failed = await until(async () => (await t.runtime.services.db.select().from(events).where(eq(events.kind, 'alarm.actionFailed')))[0], 'the failure event', 5000)
    expect(JSON.parse(failed.payload)).toMatchObject({ alarmEventId: id, policyId: 'p-2', action: 'clip', target: 'cam-1', attempts: 1, reason: 'camera cam-1 records nothing' })
  })
})
