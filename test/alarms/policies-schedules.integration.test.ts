import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'
import { unzip } from '../helpers/zip.ts'
import type { Identity } from '../../shared/handler.ts'
import { cameras, events, streamTasks } from '../../shared/db/schema/index.ts'
import { InputValidator } from '../../runtime/http/validate.ts'
import ScheduleAdd from '../../functions/schedule/add.ts'
import ScheduleUpdate from '../../functions/schedule/update.ts'
import ScheduleQuery from '../../functions/schedule/query.ts'
import SchedulePage from '../../functions/schedule/page.ts'
import ScheduleDelete from '../../functions/schedule/delete.ts'
import PolicyAdd from '../../functions/alarm-policy/add.ts'
import PolicyUpdate from '../../functions/alarm-policy/update.ts'
import PolicyDetail from '../../functions/alarm-policy/detail.ts'
import PolicySwitch from '../../functions/alarm-policy/switch.ts'
import PolicyDelete from '../../functions/alarm-policy/delete.ts'
import EventPage from '../../functions/event/EventPage.ts'
import ExportAlarms from '../../functions/event/ExportAlarms.ts'
import SetTimeParam from '../../functions/system/SetTimeParam.ts'

const admin: Identity = { userId: 'u', accountName: 'admin', sessionId: 's', transport: 'http', passwordChangeRequired: false }
const Z = (iso: string) => Date.parse(iso)

// Schedule and policy handlers on real services and a real database, with a test clock.
describe('schedules and alarm policies (spec 4.10 Schedule, Linkage / alarm policy)', () => {
  let t: TestRuntime
  const validator = new InputValidator()
  const call = async <I>(handler: { input: any; handle(input: I, ctx: any): unknown }, input: unknown) =>
    handler.handle(validator.validate(handler.input, input) as I, t.ctx(admin)) as Promise<any>
  const refusal = (handler: { input: any; handle(input: any, ctx: any): unknown }, input: unknown) =>
    call(handler, input).then(() => { throw new Error('not refused') }, (error) => error.item)

  beforeAll(async () => {
    t = await createTestRuntime()
    await t.runtime.start()
    await t.runtime.services.time.set({ timeZone: 'Europe/Berlin' })
  })
  afterAll(async () => {
    await t.close()
  })

  it('refuses schedules the schema allows but that make no sense, naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ scheduleName: 'x', windows: [{ day: 'mon', start: '09:00', end: '09:00' }] }, '/windows/0/end'],
      [{ scheduleName: 'x', windows: [{ day: 'mon', start: '24:00', end: '09:00' }] }, '/windows/0/start'],
      [{ scheduleName: 'x', windows: [{ day: 'moon', start: '08:00', end: '09:00' }] }, '/windows/0/day'],
      [{ scheduleName: 'x', windows: [], exceptions: [{ date: '2026-02-30', windows: [] }] }, '/exceptions/0/date'],
      [{ scheduleName: 'x', windows: [], exceptions: [{ date: '2026-12-24', windows: [] }, { date: '2026-12-24', windows: [] }] }, '/exceptions/1/date'],
      [{ scheduleName: 'x', windows: Array.from({ length: 17 }, (_, i) => ({ day: 'tue', start: `0${i % 10}:00`, end: '23:00' })) }, '/windows'],
    ]
    for (const [input, field] of cases)
      await expect(call(ScheduleAdd, input), JSON.stringify(input)).rejects.toMatchObject({ item: { messageKey: 'api.error.InvalidParam', details: { field } } })
    expect((await call(SchedulePage, {})).total).toBe(0)
    // The whole day is 00:00 to 24:00; a window from 09:00 to 09:00 would be none or all of it.
    const { scheduleId } = await call(ScheduleAdd, { scheduleName: 'all day', windows: [{ day: 'mon', start: '00:00', end: '24:00' }] })
    await call(ScheduleDelete, { scheduleId })
  })

  it('is on in its windows in the device\'s zone; an edit and a zone change (SetTimeParam) apply at once', async () => {
    // 2026-03-02 is a Monday: 09:00 in Berlin is 08:00Z.
    t.clock.set(Z('2026-03-02T07:59:00Z'))
    const { scheduleId } = await call(ScheduleAdd, { scheduleName: 'office', windows: [{ day: 'mon', start: '09:00', end: '17:00' }], exceptions: [{ date: '2026-03-09', windows: [] }] })
    expect(await refusal(ScheduleAdd, { scheduleName: 'office', windows: [] })).toMatchObject({ messageKey: 'api.error.ScheduleNameExists', details: { scheduleId } })
    const query = () => call(ScheduleQuery, { scheduleId })
    expect(await query()).toMatchObject({
      scheduleName: 'office', timeZone: 'Europe/Berlin', active: false, nextChange: String(Z('2026-03-02T08:00:00Z')),
      nextChangeLocal: '2026-03-02T09:00:00.000+01:00', users: { taskIds: [], policies: [] }, localTime: '2026-03-02T08:59:00.000+01:00',
    })
    t.clock.set(Z('2026-03-02T08:00:00Z'))
    expect(await query()).toMatchObject({ active: true, nextChange: String(Z('2026-03-02T16:00:00Z')) })
    // The next Monday is a holiday: the Monday after.
    t.clock.set(Z('2026-03-02T16:00:00Z'))
    expect(await query()).toMatchObject({ active: false, nextChange: String(Z('2026-03-16T08:00:00Z')) })
    // An edit at 16:30 that covers the whole afternoon: on at once.
    t.clock.set(Z('2026-03-02T15:30:00Z'))
    expect(t.runtime.services.schedules.gate(scheduleId)).toMatchObject({ active: true })
    await call(ScheduleUpdate, { scheduleId, windows: [{ day: 'mon', start: '09:00', end: '16:00' }] })
    expect(t.runtime.services.schedules.gate(scheduleId)).toMatchObject({ active: false, scheduleName: 'office' })
    // The device's zone set to New York (SetTimeParam), where it is 10:30 on Monday morning: on at once, until 16:00 there.
    await call(SetTimeParam, { timeZone: 'America/New_York' })
    expect(await query()).toMatchObject({
      timeZone: 'America/New_York', active: true, nextChange: String(Z('2026-03-02T21:00:00Z')), nextChangeLocal: '2026-03-02T16:00:00.000-05:00', localTime: '2026-03-02T10:30:00.000-05:00',
    })
    expect(t.runtime.services.schedules.gate(scheduleId)).toMatchObject({ active: true, nextChangeLocal: '2026-03-02T16:00:00.000-05:00' })
    // Back in Berlin it is 16:30: off, until the Monday after the holiday.
    await call(SetTimeParam, { timeZone: 'Europe/Berlin' })
    expect(await query()).toMatchObject({ timeZone: 'Europe/Berlin', active: false, nextChange: String(Z('2026-03-16T08:00:00Z')) })
    expect(t.runtime.services.schedules.gate(scheduleId)).toMatchObject({ active: false })
    expect(await refusal(ScheduleUpdate, { scheduleId: 'nope', windows: [] })).toMatchObject({ messageKey: 'api.error.ScheduleNotFound' })
  })

  it('a schedule in use is not deleted: the refusal names the tasks and policies using it', async () => {
    const { scheduleId } = await call(ScheduleAdd, { scheduleName: 'nights', windows: [{ day: 'fri', start: '22:00', end: '06:00' }] })
    const { policyId } = await call(PolicyAdd, { policyName: 'night watch', conditions: { label: 'person' }, scheduleId })
    await t.runtime.services.db.insert(streamTasks).values({
      taskId: 'gate-cam', algorithmCode: 'person-detector', cameraId: 'c', targetFps: 1, taskConfig: {}, motionGating: true, minDetectIntervalMs: 1000, scheduleId, createdAt: 0, updatedAt: 0,
    })
    const inUse = await refusal(ScheduleDelete, { scheduleId })
    expect(inUse).toMatchObject({ messageKey: 'api.error.ScheduleInUse', msgCode: '7603', details: { scheduleId, taskIds: ['gate-cam'], policies: [{ policyId, policyName: 'night watch' }] } })
    expect(inUse.msgText).toBe('Schedule "nights" is used by stream task gate-cam and alarm policy "night watch": change them first.')
    expect((await call(ScheduleQuery, { scheduleId })).users).toEqual({ taskIds: ['gate-cam'], policies: [{ policyId, policyName: 'night watch' }] })
    await t.runtime.services.db.delete(streamTasks)
    await call(PolicyUpdate, { policyId, scheduleId: null })
    await call(ScheduleDelete, { scheduleId })
    expect(await refusal(ScheduleQuery, { scheduleId })).toMatchObject({ messageKey: 'api.error.ScheduleNotFound', details: { scheduleId } })
    expect(await refusal(PolicyUpdate, { policyId, scheduleId })).toMatchObject({ messageKey: 'api.error.ScheduleNotFound' })
  })

  it('policies: what they refer to exists, secrets are never answered, switches keep them', async () => {
    expect(await refusal(PolicyAdd, { policyName: 'p', conditions: { taskId: 'no-task' } })).toMatchObject({ messageKey: 'api.error.NotCreated', details: { taskId: 'no-task' } })
    expect(await refusal(PolicyAdd, { policyName: 'p', conditions: { cameraId: 'no-camera' } })).toMatchObject({ messageKey: 'api.error.CameraNotFound' })
    // A clip is cut from the camera's recording: a camera that does not record cannot have one.
    await t.runtime.services.db.insert(cameras).values({ cameraId: 'not-recording', cameraName: 'not recording', sourceType: 'http', url: 'http://127.0.0.1:9/snapshot.jpg', createdAt: 0, updatedAt: 0 })
    expect(await refusal(PolicyAdd, { policyName: 'p', conditions: { cameraId: 'not-recording' }, actions: [{ type: 'clip', preRollS: 3 }] }))
      .toMatchObject({ messageKey: 'api.error.AlarmActionUnavailable', msgCode: '7613', details: { index: 0, action: 'clip', cameraId: 'not-recording' } })
    expect(await refusal(PolicyAdd, { policyName: 'p', conditions: {}, actions: [{ type: 'webhook', url: 'file:///etc/passwd' }] }))
      .toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/actions/0/url' } })
    expect(await refusal(PolicyAdd, { policyName: 'p', conditions: {}, actions: [{ type: 'mqtt', topic: 'a' }, { type: 'webhook', url: 'http://user:pw@127.0.0.1:9/hook' }] }))
      .toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/actions/1/url' } })
    expect(await refusal(PolicyAdd, { policyName: 'p', conditions: {}, actions: [{ type: 'mqtt', topic: 'alarms/#' }] }))
      .toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/actions/0/topic' } })
    expect(await refusal(PolicyAdd, { policyName: 'p', conditions: {}, actions: [{ type: 'audio', columnId: 'c', audioId: 'a' }] })).toMatchObject({ messageKey: 'api.error.AudioFileNotFound' })
    expect(await refusal(PolicyAdd, { policyName: 'p', conditions: { minDwellS: -1 } })).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/conditions/minDwellS' } })

    const actions = [{ type: 'webhook', url: 'http://127.0.0.1:9/hook', secret: 's3cret' }, { type: 'mqtt', topic: 'site/alarms' }]
    const { policyId } = await call(PolicyAdd, { policyName: 'loiter', conditions: { label: 'person', minDwellS: 5 }, actions, cooldownS: 30 })
    const detail = await call(PolicyDetail, { policyId })
    expect(detail).toMatchObject({ policyName: 'loiter', enabled: true, cooldownS: 30, scheduleId: null, conditions: { label: 'person', minDwellS: 5 } })
    expect(detail.actions).toEqual([{ type: 'webhook', url: 'http://127.0.0.1:9/hook', secretSet: true }, { type: 'mqtt', topic: 'site/alarms' }])
    expect(JSON.stringify(detail)).not.toContain('s3cret')
    // An update without the secret keeps it for the same URL.
    await call(PolicyUpdate, { policyId, actions: [{ type: 'webhook', url: 'http://127.0.0.1:9/hook' }] })
    expect((await call(PolicyDetail, { policyId })).actions).toEqual([{ type: 'webhook', url: 'http://127.0.0.1:9/hook', secretSet: true }])

    expect(await refusal(PolicySwitch, { policyIds: [policyId, 'nope'], enabled: false })).toMatchObject({ messageKey: 'api.error.AlarmPolicyNotFound', details: { policyIds: ['nope'] } })
    expect((await call(PolicyDetail, { policyId })).enabled).toBe(true)
    expect((await call(PolicySwitch, { policyIds: [policyId], enabled: false })).rows).toMatchObject([{ policyId, enabled: false }])
    expect((await call(PolicyDetail, { policyId })).enabled).toBe(false)
    await call(PolicyDelete, { policyId })
    expect(await refusal(PolicyDetail, { policyId })).toMatchObject({ messageKey: 'api.error.AlarmPolicyNotFound', msgCode: '7611' })
  })

  it('EventPage filters by camera, task and label, with each event\'s thumbnail and clip; the alarm export zips the pictures', async () => {
    const emit = (kind: any, payload: Record<string, unknown>) => t.runtime.services.events.emit(kind, payload)
    const alarmId = '0b0f6f52-5d4a-4f3e-9d3c-2f0e5f6a7b8c'
    const picture = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#f00' } }).jpeg().toBuffer()
    mkdirSync(path.join(t.config.dataPath, 'alarms'), { recursive: true })
    writeFileSync(path.join(t.config.dataPath, 'alarms', `${alarmId}.jpg`), picture)
    const snapshotUrl = `/gtw/cwai/Event/AlarmPicture?id=${alarmId}`
    await emit('object.entered', { taskId: 'door', cameraId: 'cam-1', objectId: '1', label: 'person', snapshotUrl: '/gtw/cwai/File/FullPicture?id=x' })
    const alarm = await emit('alarm.raised', { alarmId, taskId: 'door', cameraId: 'cam-1', alarmType: 'policy', label: 'person', snapshotUrl, imageUrl: snapshotUrl, clipUrl: null })
    await emit('object.entered', { taskId: 'yard', cameraId: 'cam-2', objectId: '1', label: 'car', snapshotUrl: '/gtw/cwai/File/FullPicture?id=y' })
    // The recording area's clip of the alarm, written afterwards.
    await t.runtime.services.db.insert(events).values({ kind: 'recording.clipReady', time: t.clock.now(), source: 'recording', payload: JSON.stringify({ eventId: alarm, clipUrl: '/gtw/cwai/File/Clip?id=c1' }) })

    const page = async (filter: object) => (await call(EventPage, { kinds: ['object.entered', 'alarm.raised'], ...filter })).rows
    expect((await page({ cameraId: 'cam-1' })).map((r: any) => [r.kind, r.thumbnailUrl, r.clipUrl])).toEqual([
      ['alarm.raised', snapshotUrl, '/gtw/cwai/File/Clip?id=c1'], ['object.entered', '/gtw/cwai/File/FullPicture?id=x', null],
    ])
    expect((await page({ taskId: 'yard' })).map((r: any) => r.payload.label)).toEqual(['car'])
    expect((await page({ label: 'person', kinds: ['alarm.raised'] })).map((r: any) => r.id)).toEqual([alarm])
    expect(await page({ label: 'person', cameraId: 'cam-2' })).toEqual([])

    const response: Response = await call(ExportAlarms, { kinds: ['alarm.raised'], cameraId: 'cam-1' })
    expect(response.headers.get('content-type')).toBe('application/zip')
    const entries = await unzip(Buffer.from(await response.arrayBuffer()))
    expect([...entries.keys()]).toEqual(['alarms.csv', `pictures/${alarm}.jpg`])
    expect(entries.get(`pictures/${alarm}.jpg`)).toEqual(picture)
    const csv = entries.get('alarms.csv')!.toString().split('\r\n')
    expect(csv[0]).toBe('id,time,kind,source,payload,picture')
    expect(csv[1]).toMatch(new RegExp(`^${alarm},.*,alarm\\.raised,analysis,".*",pictures/${alarm}\\.jpg$`))
    expect(csv.filter(Boolean)).toHaveLength(2)
  })
})
