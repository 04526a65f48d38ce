import { statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { expect } from 'vitest'
import type { DeviceProcess } from '../helpers/device.ts'
import { visitFootageTest as test } from '../helpers/visit-footage.ts'
import { addRtspCamera } from '../helpers/cameras.ts'
import { until } from '../helpers/processes.ts'
import { frameJpeg, probe } from '../helpers/media.ts'
import { connectEvents, type WsRecorder } from '../helpers/ws-client.ts'

const PRE_ROLL = 3
const POST_ROLL = 2
const SEGMENT_SECONDS = 2
/** A clip starts on the key frame at or before its pre-roll (1 s apart here) in a segment of at least SEGMENT_SECONDS. */
const EDGE_SLACK_SECONDS = SEGMENT_SECONDS + 1.5

test.override('deviceOptions', { env: { RECORD_SEGMENT_SECONDS: String(SEGMENT_SECONDS), RECORD_CONTINUOUS_CHUNK_SECONDS: '6', RECORD_CHECK_INTERVAL_MS: '500' } })

test.describe('recording: event clips, continuous clips, retention by budget, clip files (spec 4.10 System: recording, 4.11)', () => {
  let dir: string
  let rtspUrl: string
  let device: DeviceProcess
  let mtk: string
  let cameraId: string
  let ws: WsRecorder
  let recordingSince: number
  const post = (route: string, body: unknown) => device.post(route, body, mtk)
  const firstError = (body: any) => body.resMsg[0]
  const persons = async (jpeg: Buffer) => {
    const answer = await post('/gtw/cwai/aihost/PTaskDetectPic', { taskId: 'frames', algorithmCode: 'person-detector', imageBase64: jpeg.toString('base64') })
    expect(answer.body.resCode).toBe(1)
    return answer.body.resData.areaList.flatMap((a: any) => a.targetList).length
  }

  test.beforeAll(async ({ device: started, mtk: session, visitFootage }) => {
    dir = visitFootage.dir
    rtspUrl = visitFootage.rtsp.url
    device = started
    mtk = session
    ws = connectEvents(device.wsPort, { mtk })
    cameraId = await addRtspCamera(device, mtk, rtspUrl)
    expect((await post('/gtw/cwai/aihost/PTaskCreate', { taskId: 'frames', algorithmCode: 'person-detector', algorithmUpdateTime: String(Date.now()) })).body.resCode).toBe(1)
  })
  test.afterAll(async () => {
    ws?.ws.close()
  })

  test('refuses settings for an unknown camera, a source without a stream to copy and out-of-range values; nothing is stored', async () => {
    const http = await post('/gtw/cwai/Camera/add', { cameraName: 'snapshot', sourceType: 'http', url: 'http://127.0.0.1:9/snap.jpg', verify: false })
    expect(http.body.resCode).toBe(1)
    const unsupported = await post('/gtw/cwai/System/SetRecordParam', { cameras: [{ cameraId: http.body.resData.cameraId, mode: 'events' }] })
    expect(firstError(unsupported.body)).toMatchObject({ messageKey: 'api.error.StreamSourceUnsupported', details: { sourceType: 'http' } })
    expect(firstError((await post('/gtw/cwai/System/SetRecordParam', { cameras: [{ cameraId: 'nope', mode: 'events' }] })).body).messageKey).toBe('api.error.CameraNotFound')
    for (const bad of [{ cameras: [{ cameraId, mode: 'always' }] }, { cameras: [{ cameraId, mode: 'events', preRollSeconds: 61 }] }, { budgetBytes: -1 }, { retentionDays: 'x' }])
      expect(firstError((await post('/gtw/cwai/System/SetRecordParam', bad)).body).messageKey, JSON.stringify(bad)).toBe('api.error.InvalidParam')
    // Off for the HTTP camera is allowed (nothing to copy).
    expect((await post('/gtw/cwai/System/SetRecordParam', { cameras: [{ cameraId: http.body.resData.cameraId, mode: 'off' }] })).body.resCode).toBe(1)
    expect((await post('/gtw/cwai/Camera/delete', { cameraId: http.body.resData.cameraId })).body.resCode).toBe(1)
    const params = (await post('/gtw/cwai/System/QueryRecordParam', {})).body.resData
    expect(params.cameras).toEqual([])
    expect(params).toMatchObject({ retentionDays: 7, budgetBytes: '0' })
  })

  test('an event clip covers an object\'s visit with its pre- and post-roll; its first frame shows the room before the entry', { timeout: 240_000 }, async () => {
    const set = await post('/gtw/cwai/System/SetRecordParam', { cameras: [{ cameraId, mode: 'events', preRollSeconds: PRE_ROLL, postRollSeconds: POST_ROLL }] })
    expect(set.body.resData.cameras).toEqual([expect.objectContaining({ cameraId, mode: 'events', preRollSeconds: PRE_ROLL, postRollSeconds: POST_ROLL })])
    await until(async () => (await post('/gtw/cwai/System/QueryRecordParam', {})).body.resData.cameras[0].state === 'recording', 'recording to run')
    recordingSince = Date.now()
    expect((await post('/v1/cwai/aihost/TaskCreate', { taskId: 'visits', algorithmCode: 'person-detector', cameraId, targetFps: 5 })).body.resCode).toBe(1)

    // The first visit that began once the ring held its pre-roll: 41 s at most, then the visit and its post-roll.
    const entered = await ws.waitFor((f) => f.type === 'event' && f.event.kind === 'object.entered' && f.event.payload.taskId === 'visits' &&
      Date.parse(f.event.time) >= recordingSince + (PRE_ROLL + EDGE_SLACK_SECONDS) * 1000, 90_000).then((f) => f.event)
    const left = await ws.waitFor((f) => f.type === 'event' && f.event.kind === 'object.left' && f.event.payload.objectId === entered.payload.objectId, 60_000).then((f) => f.event)
    const ready = await ws.waitFor((f) => f.type === 'event' && f.event.kind === 'recording.clipReady' && f.event.payload.eventId === entered.id, 60_000).then((f) => f.event)
    // Later visits are not needed: the clip of this one is the oldest footage from here on.
    expect((await post('/v1/cwai/aihost/TaskCancle', { taskId: 'visits' })).body.resCode).toBe(1)
    const enteredAt = Date.parse(entered.time)
    const leftAt = Date.parse(left.time)
    expect(ready.payload).toMatchObject({ cameraId, kind: 'event', eventKind: 'object.entered', taskId: 'visits', objectId: entered.payload.objectId, clipUrl: `/gtw/cwai/File/Clip?id=${ready.payload.clipId}` })
    // It starts the pre-roll (or up to a segment more) before the entry and ends the post-roll (or up to a segment more) after the leaving.
    expect(ready.payload.startTime).toBeLessThanOrEqual(enteredAt - PRE_ROLL * 1000)
    expect(ready.payload.startTime).toBeGreaterThan(enteredAt - (PRE_ROLL + EDGE_SLACK_SECONDS) * 1000)
    expect(ready.payload.endTime).toBeGreaterThanOrEqual(leftAt + POST_ROLL * 1000)
    expect(ready.payload.endTime).toBeLessThan(leftAt + (POST_ROLL + EDGE_SLACK_SECONDS) * 1000)

    // The file, read with ffprobe: H.264 of the camera's size, as long as the visit and both rolls.
    const clip = await fetch(device.url + ready.payload.clipUrl, { headers: { mtk } })
    expect(clip.status).toBe(200)
    expect(clip.headers.get('content-type')).toBe('video/mp4')
    const file = path.join(dir, 'clip.mp4')
    writeFileSync(file, Buffer.from(await clip.arrayBuffer()))
    const probed = probe(file)
    expect(probed).toMatchObject({ codec: 'h264', width: 768, height: 432 })
    const visitSeconds = (leftAt - enteredAt) / 1000
    expect(probed.durationSeconds).toBeGreaterThanOrEqual(visitSeconds + PRE_ROLL + POST_ROLL - 0.5)
    expect(probed.durationSeconds).toBeLessThanOrEqual(visitSeconds + PRE_ROLL + POST_ROLL + 2 * EDGE_SLACK_SECONDS)
    expect(Math.abs(probed.durationSeconds - ready.payload.durationMs / 1000)).toBeLessThan(0.6)
    // 10 frames a second, none lost in the joins.
    expect(Math.abs(probed.frames - probed.durationSeconds * 10)).toBeLessThanOrEqual(3)

    // The first frame is before the entry: nobody in the room; a second after the entry there is.
    expect(await persons(await frameJpeg(file))).toBe(0)
    expect(await persons(await frameJpeg(file, (enteredAt - ready.payload.startTime) / 1000 + 1))).toBeGreaterThanOrEqual(1)

    // The clip is found by its event.
    const page = (await post('/gtw/cwai/System/RecordClipPage', { eventId: entered.id })).body.resData
    expect(page).toEqual({ total: 1, rows: [expect.objectContaining({ clipId: ready.payload.clipId, bytes: statSync(file).size, durationMs: ready.payload.durationMs })] })
  })

  test('serves a clip with a single Range (206, 416), as video/mp4, only with an mtk or the clip\'s own playback token', async () => {
    const [clip] = (await post('/gtw/cwai/System/RecordClipPage', { kind: 'event', pageSize: 1 })).body.resData.rows
    const url = device.url + clip.clipUrl
    const whole = Buffer.from(await (await fetch(url, { headers: { mtk } })).arrayBuffer())
    expect(whole.length).toBe(clip.bytes)
    // An mp4 written with +faststart: ftyp, then the index before the media.
    expect(whole.toString('latin1', 4, 8)).toBe('ftyp')
    const part = await fetch(url, { headers: { mtk, range: 'bytes=100-1099' } })
    expect(part.status).toBe(206)
    expect(part.headers.get('content-range')).toBe(`bytes 100-1099/${clip.bytes}`)
    expect(part.headers.get('content-type')).toBe('video/mp4')
    expect(Buffer.from(await part.arrayBuffer())).toEqual(whole.subarray(100, 1100))
    const suffix = await fetch(url, { headers: { mtk, range: 'bytes=-10' } })
    expect(suffix.status).toBe(206)
    expect(Buffer.from(await suffix.arrayBuffer())).toEqual(whole.subarray(whole.length - 10))
    const unsatisfiable = await fetch(url, { headers: { mtk, range: `bytes=${clip.bytes}-` } })
    expect(unsatisfiable.status).toBe(416)
    expect(unsatisfiable.headers.get('content-range')).toBe(`bytes */${clip.bytes}`)
    expect((await unsatisfiable.json()).resMsg[0].messageKey).toBe('api.error.rangeNotSatisfiable')

    // Without an mtk: 401; a playback link works for its clip only, and not with its token altered.
    expect((await fetch(url)).status).toBe(401)
    const link = (await post('/gtw/cwai/File/ClipPlayUrl', { id: clip.clipId })).body.resData
    expect(link.url).toMatch(new RegExp(`^/gtw/cwai/File/Clip\\?id=${clip.clipId}&token=[\\w-]{43}$`))
    const played = await fetch(device.url + link.url, { headers: { range: 'bytes=0-3' } })
    expect(played.status).toBe(206)
    expect(Buffer.from(await played.arrayBuffer())).toEqual(whole.subarray(0, 4))
    const token = new URL(link.url, device.url).searchParams.get('token')!
    const otherId = randomUUID()
    expect((await fetch(`${device.url}/gtw/cwai/File/Clip?id=${otherId}&token=${token}`)).status).toBe(401)
    expect((await fetch(`${url}&token=${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`)).status).toBe(401)
    expect(firstError((await post('/gtw/cwai/File/ClipPlayUrl', { id: otherId })).body).messageKey).toBe('api.error.ClipNotFound')
    const missing = await fetch(`${device.url}/gtw/cwai/File/Clip?id=${otherId}`, { headers: { mtk } })
    expect(missing.status).toBe(404)
    expect((await missing.json()).resMsg[0].messageKey).toBe('api.error.ClipNotFound')
  })

  test('continuous recording keeps clips; over a small budget the oldest footage goes first, with an event', { timeout: 180_000 }, async () => {
    expect((await post('/gtw/cwai/System/SetRecordParam', { cameras: [{ cameraId, mode: 'continuous', preRollSeconds: PRE_ROLL, postRollSeconds: POST_ROLL }] })).body.resCode).toBe(1)
    // Three continuous clips of about 6 s (the chunk setting).
    const continuous = await until(async () => {
      const rows = (await post('/gtw/cwai/System/RecordClipPage', { kind: 'continuous', pageSize: 10 })).body.resData.rows
      return rows.length >= 3 && rows
    }, 'three continuous clips', 90_000)
    for (const row of continuous) {
      expect(row.durationMs).toBeGreaterThanOrEqual(6000)
      expect(row.durationMs).toBeLessThan(6000 + EDGE_SLACK_SECONDS * 1000)
    }
    // Consecutive pieces: each starts where the one before ended (the same segment boundary, within the wall-clock estimate).
    const ordered = [...continuous].reverse()
    for (let i = 1; i < ordered.length; i++) expect(Math.abs(ordered[i].startTime - ordered[i - 1].endTime)).toBeLessThan(300)

    const before = (await post('/gtw/cwai/System/QueryRecordParam', {})).body.resData
    const all = (await post('/gtw/cwai/System/RecordClipPage', { pageSize: 100 })).body.resData.rows
    // The event clip of the visit above is the oldest.
    const [oldest] = [...all].sort((a: any, b: any) => a.startTime - b.startTime)
    expect(oldest.kind).toBe('event')
    // A budget that holds what is there now minus half the oldest clip: it must go first.
    const budget = Number(before.usage.clipBytes) + Number(before.usage.ringBytes) - Math.floor(oldest.bytes / 2)
    expect((await post('/gtw/cwai/System/SetRecordParam', { budgetBytes: String(budget) })).body.resData.budgetBytes).toBe(String(budget))
    const deleted = await ws.waitFor((f) => f.type === 'event' && f.event.kind === 'recording.footageDeleted', 30_000).then((f) => f.event)
    expect(deleted.payload).toMatchObject({ reason: 'budget', oldestStartTime: oldest.startTime })
    expect(deleted.payload.clipIds[0]).toBe(oldest.clipId)
    // Oldest first: every clip deleted is older than every clip kept.
    const kept = (await post('/gtw/cwai/System/RecordClipPage', { pageSize: 100 })).body.resData.rows
    expect(kept.map((c: any) => c.clipId)).not.toContain(oldest.clipId)
    const deletedStarts = all.filter((c: any) => deleted.payload.clipIds.includes(c.clipId)).map((c: any) => c.startTime)
    expect(deletedStarts).toHaveLength(deleted.payload.clips)
    for (const clip of kept) expect(clip.startTime).toBeGreaterThanOrEqual(Math.max(...deletedStarts))
    expect((await fetch(device.url + oldest.clipUrl, { headers: { mtk } })).status).toBe(404)
    // Recording goes on within the budget.
    const after = await until(async () => {
      const params = (await post('/gtw/cwai/System/QueryRecordParam', {})).body.resData
      return params.usage.clips > kept.length && params
    }, 'another continuous clip', 60_000)
    expect(Number(after.usage.clipBytes)).toBeLessThanOrEqual(budget)
    expect(after.cameras[0]).toMatchObject({ cameraId, mode: 'continuous', state: 'recording' })
    expect((await post('/gtw/cwai/System/SetRecordParam', { budgetBytes: '0', cameras: [{ cameraId, mode: 'off' }] })).body.resData.cameras[0]).toMatchObject({ mode: 'off', state: 'off' })
  })
})
