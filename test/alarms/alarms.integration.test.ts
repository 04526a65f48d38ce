import { readFileSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyWebhook } from '../../runtime/events/webhook-signature.ts'
import { freePort, startDevice, type DeviceProcess } from '../helpers/device.ts'
import { startBroker, type Broker } from '../helpers/mosquitto.ts'
import { recordTopics, type Recorder } from '../helpers/mqtt-client.ts'
import { until } from '../helpers/processes.ts'
import { startRtspServer, type RtspServer } from '../helpers/rtsp-server.ts'
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts'
import { unzip } from '../helpers/zip.ts'
import { PERSON_VIDEO } from '../helpers/video.ts'

const root = path.resolve(import.meta.dirname, '../..')
/**
 * The visits in the footage, read from its frames one second apart: [first frame with the
 * person, last frame with them] in seconds — in view for 13, 21, 19, 11, 27 and 11 s, with 4 to
 * 6 s of empty office between them. A dwell of 16 s is reached by the 2nd, 3rd and 5th visit
 * only, 3 s or more apart from the others; 3 s by every visit.
 */
const VISITS: [number, number][] = [[6, 19], [23, 44], [50, 69], [75, 86], [92, 119], [124, 135]]
const LONG_DWELL_S = 16
const LONG_VISITS = VISITS.filter(([from, to]) => to - from >= LONG_DWELL_S).length
/**
 * The schedules' clock starts 90 s before summer time begins in Berlin (2026-03-29, 02:00 CET
 * → 03:00 CEST at 01:00Z). A window from 02:00:00 to 02:00:40 lies in the hour the clocks skip:
 * it runs once, 03:00:00–03:00:40 summer time.
 */
const CLOCK_START = '2026-03-29T00:58:30Z'
const WINDOW_ON = Date.parse('2026-03-29T01:00:00Z')
const WINDOW_OFF = Date.parse('2026-03-29T01:00:40Z')
const SECRET = 'policy-secret'

describe('alarm policies and schedules on a camera with the real runtime, sidecar and ffmpeg (spec 4.10)', () => {
  let device: DeviceProcess
  let mtk: string
  let broker: Broker
  let receiver: Receiver
  let mqtt: Recorder
  const servers: RtspServer[] = []
  const post = (route: string, body: unknown) => device.post(route, body, mtk)
  const ok = async (route: string, body: unknown) => {
    const answer = await post(route, body)
    expect(answer.body.resMsg, `${route} ${JSON.stringify(answer.body.resMsg)}`).toEqual([])
    return answer.body.resData
  }
  /**
   * A camera on an RTSP server of its own, playing the footage from its start. (A GStreamer
   * mount shared by a client that left and one that joined later delivered a frame every few
   * seconds to the newcomer: each test has its own.) A just-started server can answer the first
   * session with an error while it prepares the media: retried as the device advises.
   */
  const rtspCamera = async (cameraName: string) => {
    let server = await startRtspServer(PERSON_VIDEO, await freePort())
    servers.push(server)
    const exits: string[] = []
    let added = await post('/gtw/cwai/Camera/add', { cameraName, sourceType: 'rtsp', url: server.url })
    for (let retry = 0; retry < 3 && added.body.resMsg[0]?.retryable; retry++) {
      await new Promise((resolve) => setTimeout(resolve, 1000 * (added.body.resMsg[0].retryAfterSeconds ?? 1)))
      // A server ended from outside (by another process on this machine) is started again.
      if (server.process.exitCode !== null || server.process.signalCode !== null) {
        exits.push(`server exited: ${server.process.exitCode ?? server.process.signalCode}`)
        servers.splice(servers.indexOf(server), 1, server = await startRtspServer(PERSON_VIDEO, await freePort()))
      }
      added = await post('/gtw/cwai/Camera/add', { cameraName, sourceType: 'rtsp', url: server.url })
    }
    expect(added.body.resMsg, exits.join(', ')).toEqual([])
    return added.body.resData.cameraId as string
  }
  const status = async (taskId: string) => (await post('/v1/cwai/aihost/QueryTaskStatus', { taskId })).body.resData
  const eventsOf = async (taskId: string, kinds: string[]) =>
    (await ok('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 500, kinds, taskId })).rows.reverse()

  beforeAll(async () => {
    broker = await startBroker()
    receiver = await startReceiver()
    device = await startDevice({ env: { SCHEDULE_CLOCK_START: CLOCK_START, MQTT_URL: broker.url, MQTT_CLIENT_ID: 'alarms-test', EVENT_POLL_MS: '100' } })
    mtk = await device.adminToken()
    await ok('/gtw/cwai/System/SetTimeParam', { timeZone: 'Europe/Berlin' })
    mqtt = await recordTopics(broker.url, 'site/alarms/#')
  })
  afterAll(async () => {
    await mqtt?.close()
    await device?.stop()
    device?.cleanup()
    for (const server of servers) await server.stop()
    await receiver?.close()
    await broker?.cleanup()
  })

  it('a schedule window turns analysis on and off at its boundaries, on the night summer time begins (injected clock)', { timeout: 300_000 }, async () => {
    const { scheduleId } = await ok('/gtw/cwai/schedule/add', { scheduleName: 'dst-night', windows: [{ day: 'sun', start: '02:00:00', end: '02:00:40' }] })
    const clock = async () => Number((await ok('/gtw/cwai/schedule/query', { scheduleId })).now)
    const schedule = await ok('/gtw/cwai/schedule/query', { scheduleId })
    expect(schedule).toMatchObject({ active: false, nextChange: String(WINDOW_ON), nextChangeLocal: '2026-03-29T03:00:00.000+02:00', timeZone: 'Europe/Berlin' })
    const cameraId = await rtspCamera('night')
    expect(Number((await ok('/gtw/cwai/schedule/query', { scheduleId })).now), 'the set-up took longer than the clock\'s lead on the window').toBeLessThan(WINDOW_ON - 10_000)
    await ok('/v1/cwai/aihost/TaskCreate', { taskId: 'night', algorithmCode: 'person-detector', cameraId, targetFps: 2, motionGating: false, scheduleId })

    const idle = await until(async () => { const s = await status('night'); return s.state === 'idle' && s.scheduleSkipped > 0 && s }, 'the task to idle outside its window', 60_000)
    expect(idle.stateReason).toBe('outsideSchedule: "dst-night" until 2026-03-29T03:00:00.000+02:00')
    expect(idle.detectorLatencyP50Ms).toBeNull()

    /** Polls the task until `state`, with the schedules' clock read before and after each look. */
    const watch = async (state: string, timeoutMs: number) => {
      const seen: { before: number; after: number; status: any }[] = []
      await until(async () => {
        const before = await clock()
        const s = await status('night')
        seen.push({ before, after: await clock(), status: s })
        return s.state === state
      }, `the task to be ${state}`, timeoutMs)
      return seen
    }
    const on = await watch('running', 150_000)
    // Never analysing before the window; analysing within a few frames of it.
    for (const look of on.slice(0, -1)) expect(look.status.state, JSON.stringify(look)).toBe('idle')
    const firstOn = on[on.length - 1]!
    expect(firstOn.after).toBeGreaterThanOrEqual(WINDOW_ON)
    expect(firstOn.before).toBeLessThan(WINDOW_ON + 10_000)
    const skippedBefore = firstOn.status.scheduleSkipped
    await until(async () => (await status('night')).detectorLatencyP50Ms !== null, 'a detection in the window')

    const off = await watch('idle', 90_000)
    for (const look of off.slice(0, -1)) expect(look.status.state, JSON.stringify(look)).toBe('running')
    const firstOff = off[off.length - 1]!
    expect(firstOff.after).toBeGreaterThanOrEqual(WINDOW_OFF)
    expect(firstOff.before).toBeLessThan(WINDOW_OFF + 10_000)
    // The next window is a week later, in summer time.
    expect(firstOff.status.stateReason).toBe('outsideSchedule: "dst-night" until 2026-04-05T02:00:00.000+02:00')
    await until(async () => (await status('night')).scheduleSkipped > skippedBefore, 'frames skipped again')
  })

  it('a schedule in use is not deleted; the refusal names its task', async () => {
    const { rows } = await ok('/gtw/cwai/schedule/page', { scheduleName: 'dst-night' })
    const scheduleId = rows[0].scheduleId
    const refused = await post('/gtw/cwai/schedule/delete', { scheduleId })
    expect(refused.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.ScheduleInUse', details: { scheduleId, taskIds: ['night'], policies: [] } })
    expect(refused.body.resMsg[0].msgText).toContain('stream task night')
    await ok('/v1/cwai/aihost/TaskCancle', { taskId: 'night' })
    await ok('/gtw/cwai/schedule/delete', { scheduleId })
    const [camera] = (await ok('/gtw/cwai/Camera/page', { cameraName: 'night' })).rows
    await ok('/gtw/cwai/Camera/delete', { cameraId: camera.cameraId })
    await servers.shift()!.stop()
  })

  it('policies on the footage: one alarm per visit reaching the dwell, none for shorter ones, one per object within the cooldown, to the webhook and MQTT; logic hits once per object', { timeout: 420_000 }, async () => {
    // The person detector with a logic node: every person it is at least 50 % sure of is a hit.
    const manifest = JSON.parse(readFileSync(path.join(root, 'models/manifests/person-detector.json'), 'utf8'))
    await ok('/gtw/cwai/algorithm/layout/save', { manifest: {
      ...manifest, algorithmId: 'person-logic', algorithmName: 'Person with logic',
      nodes: [...manifest.nodes, { id: 'alarm', action: 'logic', condition: { label: 'person', minConfidence: 0.5 }, minTargets: 1 }],
    } })
    const cameraId = await rtspCamera('office')
    const dwell = await ok('/gtw/cwai/AlarmStrage/add', {
      policyName: 'dwell 3 s', conditions: { cameraId, label: 'person', minDwellS: 3 }, cooldownS: 600,
      actions: [{ type: 'webhook', url: receiver.url, secret: SECRET }, { type: 'mqtt', topic: 'site/alarms/dwell' }],
    })
    const long = await ok('/gtw/cwai/AlarmStrage/add', { policyName: `dwell ${LONG_DWELL_S} s`, conditions: { cameraId, label: 'person', minDwellS: LONG_DWELL_S }, cooldownS: 0 })
    await ok('/v1/cwai/aihost/TaskCreate', { taskId: 'door', algorithmCode: 'person-logic', cameraId, targetFps: 5 })
    const firstFrame = await until(async () => (await status('door')).framesIn > 0 && Date.now(), 'the first frame', 60_000)

    // A person already in view when the task started is a cut visit: six whole visits after it are one loop of the footage.
    const whole = async () => {
      const events = await eventsOf('door', ['object.entered', 'object.left'])
      const entered = events.filter((e: any) => e.kind === 'object.entered' && Date.parse(e.time) >= firstFrame + 3000)
      return entered.map((e: any) => ({ entered: e, left: events.find((l: any) => l.kind === 'object.left' && l.payload.objectId === e.payload.objectId) }))
        .filter((v: any) => v.left)
    }
    const visits = (await until(async () => { const v = await whole(); return v.length >= VISITS.length && v }, 'a loop of whole visits', 330_000)).slice(0, VISITS.length)
    const alarms = await eventsOf('door', ['alarm.raised'])
    const of = (objectId: string, which: (a: any) => boolean) => alarms.filter((a: any) => a.payload.objectId === objectId && which(a))
    const all = await eventsOf('door', ['object.entered', 'object.left', 'alarm.raised'])
    const summary = [`first frame ${new Date(firstFrame).toISOString()}`, JSON.stringify(await status('door')),
      ...all.map((e: any) => `${e.time} ${e.kind} ${e.payload.objectId} ${e.payload.dwellMs ?? ''} ${e.payload.policyName ?? ''}`)].join('\n')

    for (const { entered, left } of visits) {
      const objectId = entered.payload.objectId
      const dwellAlarms = of(objectId, (a) => a.payload.policyId === dwell.policyId)
      const longAlarms = of(objectId, (a) => a.payload.policyId === long.policyId)
      // Every visit stays more than 3 s: exactly one alarm, not one per frame.
      expect(dwellAlarms, summary).toHaveLength(1)
      expect(longAlarms, summary).toHaveLength(left.payload.dwellMs >= LONG_DWELL_S * 1000 ? 1 : 0)
      expect(of(objectId, (a) => a.payload.alarmType === 'logic'), summary).toHaveLength(1)
      expect(dwellAlarms[0].payload).toMatchObject({
        taskId: 'door', cameraId, alarmType: 'policy', policyName: 'dwell 3 s', objectId, objectIds: [objectId], label: 'person', count: 1, clipUrl: null,
        snapshotUrl: expect.stringMatching(/^\/gtw\/cwai\/Event\/AlarmPicture\?id=[0-9a-f-]{36}$/),
      })
      expect(dwellAlarms[0].payload.dwellMs).toBeGreaterThanOrEqual(3000)
      for (const alarm of longAlarms) expect(alarm.payload.dwellMs).toBeGreaterThanOrEqual(LONG_DWELL_S * 1000)
    }
    // The footage's own count: the long visits of one loop, and no more.
    expect(visits.filter((v: any) => of(v.entered.payload.objectId, (a) => a.payload.policyId === long.policyId).length === 1), summary).toHaveLength(LONG_VISITS)

    // The dwell policy's alarms reached the webhook (signed) and the MQTT topic, each once or more (at-least-once).
    const dwellIds = visits.map((v: any) => of(v.entered.payload.objectId, (a) => a.payload.policyId === dwell.policyId)[0].id)
    for (const id of dwellIds) {
      const delivery = await receiver.waitFor((d) => d.body?.id === id)
      expect(delivery.headers['x-event-kind']).toBe('alarm.raised')
      expect(verifyWebhook(SECRET, String(delivery.headers['x-event-timestamp']), delivery.raw, String(delivery.headers['x-event-signature']))).toBe(true)
      const message = await mqtt.waitFor((m) => m.body?.id === id)
      expect(message.topic).toBe('site/alarms/dwell')
      expect(message.body).toMatchObject({ kind: 'alarm.raised', payload: { policyId: dwell.policyId } })
    }
    expect(receiver.deliveries.every((d) => d.body.payload.policyId === dwell.policyId)).toBe(true)

    // The snapshot: the analysed frame, kept with the event, served with Range.
    const snapshot = alarms.find((a: any) => a.id === dwellIds[0]).payload.snapshotUrl
    const whole_ = await fetch(device.url + snapshot, { headers: { mtk } })
    expect(whole_.headers.get('content-type')).toBe('image/jpeg')
    const jpeg = Buffer.from(await whole_.arrayBuffer())
    // The analysed frame: the person detector letterboxes to 512, so the footage (768 × 432) is decoded at 512 × 288.
    expect(await sharp(jpeg).metadata()).toMatchObject({ format: 'jpeg', width: 512, height: 288 })
    const part = await fetch(device.url + snapshot, { headers: { mtk, range: 'bytes=2-9' } })
    expect(part.status).toBe(206)
    expect(Buffer.from(await part.arrayBuffer())).toEqual(jpeg.subarray(2, 10))

    // The event history: the alarm's thumbnail; the export: every alarm with its picture.
    const page = await ok('/gtw/cwai/Event/EventPage', { kinds: ['alarm.raised'], taskId: 'door', label: 'person', pageSize: 500 })
    expect(page.rows.find((r: any) => r.id === dwellIds[0])).toMatchObject({ thumbnailUrl: snapshot, clipUrl: null })
    const exported = await fetch(`${device.url}/gtw/cwai/Event/ExportAlarms`, { method: 'POST', headers: { mtk, 'content-type': 'application/json' }, body: JSON.stringify({ taskId: 'door' }) })
    const entries = await unzip(Buffer.from(await exported.arrayBuffer()))
    for (const id of dwellIds) expect(entries.get(`pictures/${id}.jpg`)?.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]))
    expect(entries.get(`pictures/${dwellIds[0]}.jpg`)).toEqual(jpeg)

    // Switched off, the dwell policy raises nothing for the next visit; the others still do.
    await ok('/gtw/cwai/AlarmStrage/switch', { policyIds: [dwell.policyId], enabled: false })
    const switchedAt = Date.now()
    const next = await until(async () => (await whole()).find((v: any) => Date.parse(v.entered.time) > switchedAt), 'the next visit', 90_000)
    const after = await eventsOf('door', ['alarm.raised'])
    const nextId = next.entered.payload.objectId
    expect(after.filter((a: any) => a.payload.objectId === nextId && a.payload.policyId === dwell.policyId)).toEqual([])
    expect(after.filter((a: any) => a.payload.objectId === nextId && a.payload.alarmType === 'logic')).toHaveLength(1)
    await ok('/v1/cwai/aihost/TaskCancle', { taskId: 'door' })
  })
})
