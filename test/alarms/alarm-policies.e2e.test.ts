import { readFileSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import { expect } from 'vitest'
import { verifyWebhook } from '../../runtime/events/webhook-signature.ts'
import { footageApi, type FootageApi } from '../helpers/cameras.ts'
import type { DeviceProcess } from '../helpers/device.ts'
import { type Broker } from '../helpers/mosquitto.ts'
import { brokerTest } from '../helpers/broker-fixture.ts'
import { recordTopics, type Recorder } from '../helpers/mqtt-client.ts'
import { until } from '../helpers/processes.ts'
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
const SECRET = 'policy-secret'

/** The device publishes to a broker of the file's own. */
const test = brokerTest
test.override('deviceOptions', { scope: 'file' }, async ({ broker }: { broker: Broker }) => ({ env: { MQTT_URL: broker.url, MQTT_CLIENT_ID: 'alarms-test', EVENT_POLL_MS: '100' } }))

test.describe('alarm policies on a camera with the real runtime, sidecar and ffmpeg (spec 4.10)', () => {
  let device: DeviceProcess
  let mtk: string
  let receiver: Receiver
  let mqtt: Recorder
  let api: FootageApi
  const ok = (route: string, body: unknown) => api.ok(route, body)
  const status = (taskId: string) => api.status(taskId)
  const eventsOf = async (taskId: string, kinds: string[]) =>
    (await ok('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 500, kinds, taskId })).rows.reverse()

  test.beforeAll(async ({ device: started, mtk: session, broker }) => {
    device = started
    mtk = session
    api = footageApi(device, mtk, PERSON_VIDEO)
    receiver = await startReceiver()
    mqtt = await recordTopics(broker.url, 'site/alarms/#')
  })
  test.afterAll(async () => {
    await mqtt?.close()
    await api?.stopCameras()
    await receiver?.close()
  })

  test('policies on the footage: one alarm per visit reaching the dwell, none for shorter ones, one per object within the cooldown, to the webhook and MQTT; logic hits once per object', { timeout: 420_000 }, async () => {
    // The person detector with a logic node: every person it is at least 50 % sure of is a hit.
    const manifest = JSON.parse(readFileSync(path.join(root, 'models/manifests/person-detector.json'), 'utf8'))
    await ok('/gtw/cwai/algorithm/layout/save', { manifest: {
      ...manifest, algorithmId: 'person-logic', algorithmName: 'Person with logic',
      nodes: [...manifest.nodes, { id: 'alarm', action: 'logic', condition: { label: 'person', minConfidence: 0.5 }, minTargets: 1 }],
    } })
    const cameraId = await api.addCamera('office')
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

    // The snapshot: kept with the event, served with Range.
    const alarmPayload = alarms.find((a: any) => a.id === dwellIds[0]).payload
    const snapshot = alarmPayload.snapshotUrl
    const whole_ = await fetch(device.url + snapshot, { headers: { mtk } })
    expect(whole_.headers.get('content-type')).toBe('image/jpeg')
    const jpeg = Buffer.from(await whole_.arrayBuffer())
    // The person detector letterboxes to 512, so the footage (768 × 432) is analysed at 512 × 288; the snapshot is the
    // camera's frame at its own size, or, flagged with the reason, the analysed frame (docs/cameras-and-stream-tasks.md
    // "Snapshots"; test/streams/full-resolution-snapshots.e2e.test.ts requires the first), and the payload says which.
    const size = alarmPayload.snapshotFullResolution ? { width: 768, height: 432 } : { width: 512, height: 288 }
    expect(alarmPayload, JSON.stringify(alarmPayload)).toMatchObject({
      snapshotWidth: size.width, snapshotHeight: size.height, snapshotFallback: alarmPayload.snapshotFullResolution ? null : expect.stringMatching(/^too late|^the camera's own reader|^SNAPSHOT_FULL_RESOLUTION is off/),
    })
    expect(await sharp(jpeg).metadata()).toMatchObject({ format: 'jpeg', ...size })
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
