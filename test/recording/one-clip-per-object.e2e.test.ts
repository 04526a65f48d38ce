import { execFileSync } from 'node:child_process'
import { statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { expect } from 'vitest'
import type { DeviceProcess } from '../helpers/device.ts'
import { visitFootageTest as test } from '../helpers/visit-footage.ts'
import { addRtspCamera } from '../helpers/cameras.ts'
import { until } from '../helpers/processes.ts'
import { FFMPEG, probe } from '../helpers/media.ts'
import { connectEvents, type WsRecorder } from '../helpers/ws-client.ts'

const PRE_ROLL = 3
const POST_ROLL = 2
const SEGMENT_SECONDS = 2
/** A clip starts on the key frame at or before its pre-roll (1 s apart here) in a segment of at least SEGMENT_SECONDS. */
const EDGE_SLACK_SECONDS = SEGMENT_SECONDS + 1.5
/** Three policies on the person: two with a clip action of their own rolls, one without (the camera's rolls). */
const POLICIES = [
  { policyName: 'clip 6/8', minDwellS: 2, clip: { preRollS: 6, postRollS: 8 } },
  { policyName: 'no clip action', minDwellS: 4, clip: null },
  { policyName: 'clip 2/2', minDwellS: 6, clip: { preRollS: 2, postRollS: 2 } },
] as const

test.override('deviceOptions', { env: { RECORD_SEGMENT_SECONDS: String(SEGMENT_SECONDS), RECORD_CHECK_INTERVAL_MS: '500' } })

test.describe('one clip per object: a visit and the alarms raised on it (docs/recording-and-live-view.md "Recording")', () => {
  let dir: string
  let rtspUrl: string
  let device: DeviceProcess
  let mtk: string
  let ws: WsRecorder
  const post = (route: string, body: unknown) => device.post(route, body, mtk)
  const ok = async (route: string, body: unknown) => {
    const answer = await post(route, body)
    expect(answer.body.resCode, JSON.stringify(answer.body.resMsg)).toBe(1)
    return answer.body.resData
  }

  test.beforeAll(async ({ device: started, mtk: session, visitFootage }) => {
    dir = visitFootage.dir
    rtspUrl = visitFootage.rtsp.url
    device = started
    mtk = session
    ws = connectEvents(device.wsPort, { mtk })
  })
  test.afterAll(async () => {
    ws?.ws.close()
  })

  test('one person\'s visit with three alarms is one clip covering every roll, found by each event, smaller than the clips it replaces', { timeout: 300_000 }, async () => {
    const cameraId = await addRtspCamera(device, mtk, rtspUrl)
    // A span ending before it starts, and an event id that is no number: clear refusals.
    for (const [bad, field] of [[{ from: 2000, to: 1000 }, '/to'], [{ from: 1000, to: 1000 }, '/to'], [{ eventId: 'x' }, '/eventId']] as const) {
      const refused = (await post('/gtw/cwai/System/RecordClipPage', bad)).body
      expect(refused.resMsg[0], JSON.stringify(bad)).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field } })
    }
    await ok('/gtw/cwai/System/SetRecordParam', { cameras: [{ cameraId, mode: 'events', preRollSeconds: PRE_ROLL, postRollSeconds: POST_ROLL }] })
    await until(async () => (await post('/gtw/cwai/System/QueryRecordParam', {})).body.resData.cameras[0].state === 'recording', 'recording to run')
    const recordingSince = Date.now()
    await ok('/v1/cwai/aihost/TaskCreate', { taskId: 'visits', algorithmCode: 'person-detector', cameraId, targetFps: 5 })
    for (const p of POLICIES) {
      await ok('/gtw/cwai/AlarmStrage/add', {
        policyName: p.policyName, conditions: { taskId: 'visits', label: 'person', minDwellS: p.minDwellS }, cooldownS: 0,
        actions: p.clip ? [{ type: 'clip', ...p.clip }] : [],
      })
    }

    // The first visit that began once the ring held the longest pre-roll, and its end.
    const isEvent = (f: any, kind: string) => f.type === 'event' && f.event.kind === kind
    const entered = await ws.waitFor((f) => isEvent(f, 'object.entered') && f.event.payload.taskId === 'visits' &&
      Date.parse(f.event.time) >= recordingSince + (6 + EDGE_SLACK_SECONDS) * 1000, 90_000).then((f) => f.event)
    const objectId = entered.payload.objectId
    const left = await ws.waitFor((f) => isEvent(f, 'object.left') && f.event.payload.objectId === objectId, 60_000).then((f) => f.event)
    const alarms = await Promise.all(POLICIES.map((p) => ws.waitFor((f) => isEvent(f, 'alarm.raised') && f.event.payload.objectId === objectId && f.event.payload.policyName === p.policyName, 30_000).then((f) => f.event)))
    // A policy's clip action gives its alarm a URL at once; the one without gets none.
    expect(alarms.map((a) => a.payload.clipUrl === null)).toEqual([false, true, false])
    const originating = [entered, ...alarms]
    const readies = await Promise.all(originating.map((e) => ws.waitFor((f) => isEvent(f, 'recording.clipReady') && f.event.payload.eventId === e.id, 60_000).then((f) => f.event)))
    // The footage's next visit (41 s later): its own clip.
    const entered2 = await ws.waitFor((f) => isEvent(f, 'object.entered') && f.event.payload.taskId === 'visits' && Date.parse(f.event.time) > Date.parse(left.time), 60_000).then((f) => f.event)
    const left2 = await ws.waitFor((f) => isEvent(f, 'object.left') && f.event.payload.objectId === entered2.payload.objectId, 60_000).then((f) => f.event)
    const ready2 = await ws.waitFor((f) => isEvent(f, 'recording.clipReady') && f.event.payload.eventId === entered2.id, 60_000).then((f) => f.event)
    await ok('/v1/cwai/aihost/TaskCancle', { taskId: 'visits' })

    // One clip: every follow-up names the same clip and all four events.
    const clipId = readies[0].payload.clipId
    expect(readies.map((r) => r.payload.clipId)).toEqual([clipId, clipId, clipId, clipId])
    expect(readies.map((r) => r.payload.eventKind)).toEqual(['object.entered', 'alarm.raised', 'alarm.raised', 'alarm.raised'])
    const ids = originating.map((e) => e.id).sort((a, b) => a - b)
    for (const ready of readies) expect([...ready.payload.eventIds].sort((a: number, b: number) => a - b)).toEqual(ids)
    // The first policy's clip action promised the URL the clip is written under; the third's URL serves it too.
    expect(readies[0].payload.clipUrl).toBe(alarms[0].payload.clipUrl)

    // Its span: entry − pre-roll to leaving + post-roll, and every alarm ± its rolls (the policy's, else the camera's).
    const at = (e: any) => Date.parse(e.time)
    const rolls = POLICIES.map((p) => p.clip ?? { preRollS: PRE_ROLL, postRollS: POST_ROLL })
    const spans = [[at(entered) - PRE_ROLL * 1000, at(left) + POST_ROLL * 1000], ...alarms.map((a, i) => [at(a) - rolls[i]!.preRollS * 1000, at(a) + rolls[i]!.postRollS * 1000])] as [number, number][]
    const from = Math.min(...spans.map((s) => s[0]))
    const to = Math.max(...spans.map((s) => s[1]))
    const { startTime, endTime } = readies[0].payload
    expect(startTime).toBeLessThanOrEqual(from)
    expect(startTime).toBeGreaterThan(from - EDGE_SLACK_SECONDS * 1000)
    expect(endTime).toBeGreaterThanOrEqual(to)
    expect(endTime).toBeLessThan(to + EDGE_SLACK_SECONDS * 1000)

    // Found by each of its events; the only event clip of the visit; written once.
    for (const e of originating) {
      const page = await ok('/gtw/cwai/System/RecordClipPage', { eventId: e.id })
      expect(page.total, `${e.kind} ${e.id}`).toBe(1)
      expect(page.rows[0]).toMatchObject({ clipId, eventId: entered.id, eventKind: 'object.entered', objectId, taskId: 'visits' })
      expect(page.rows[0].events.map((x: any) => x.eventId).sort((a: number, b: number) => a - b)).toEqual(ids)
    }
    const during = await ok('/gtw/cwai/System/RecordClipPage', { cameraId, kind: 'event', from: at(entered), to: at(left) })
    expect(during.rows.map((r: any) => r.clipId)).toEqual([clipId])
    // Two visits of the footage (one person each), two clips: one per visit.
    const visits = await ok('/gtw/cwai/Event/EventPage', { kinds: ['object.entered'], taskId: 'visits', startTime: entered.time, endTime: new Date(at(left2) + 1).toISOString() })
    expect(visits.rows.map((e: any) => e.id).sort((a: number, b: number) => a - b)).toEqual([entered.id, entered2.id])
    const both = await ok('/gtw/cwai/System/RecordClipPage', { cameraId, kind: 'event', from: at(entered), to: at(left2), pageSize: 500 })
    expect(both.rows.map((r: any) => r.clipId).sort()).toEqual([clipId, ready2.payload.clipId].sort())
    expect(ready2.payload.clipId).not.toBe(clipId)
    expect(both.rows.find((r: any) => r.clipId === ready2.payload.clipId).events.map((e: any) => e.eventKind)).toEqual(['object.entered', 'alarm.raised', 'alarm.raised', 'alarm.raised'])

    // Both promised URLs play it: the same bytes.
    const file = path.join(dir, 'merged.mp4')
    const merged = Buffer.from(await (await fetch(device.url + readies[0].payload.clipUrl, { headers: { mtk } })).arrayBuffer())
    writeFileSync(file, merged)
    expect(merged.length).toBe(during.rows[0].bytes)
    const alias = await fetch(device.url + alarms[2].payload.clipUrl, { headers: { mtk } })
    expect(alias.status).toBe(200)
    expect(Buffer.from(await alias.arrayBuffer()).equals(merged)).toBe(true)
    const link = await ok('/gtw/cwai/File/ClipPlayUrl', { id: new URL(alarms[2].payload.clipUrl, device.url).searchParams.get('id') })
    expect((await fetch(device.url + link.url)).status).toBe(200)

    // The clips it replaces, one per event (what the device wrote before: the same copy of the
    // stream cut at the key frame at or before each span's start), measured on the same footage.
    const probed = probe(file)
    let separate = 0
    spans.forEach(([s, e], i) => {
      const cut = path.join(dir, `separate-${i}.mp4`)
      execFileSync(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-ss', String(Math.max(0, (s - startTime) / 1000)), '-i', file, '-t', String((e - s) / 1000), '-c', 'copy', '-y', cut])
      separate += statSync(cut).size
    })
    expect(probed.durationSeconds).toBeGreaterThanOrEqual((to - from) / 1000 - 0.5)
    expect(merged.length).toBeLessThan(separate)
    console.log(JSON.stringify({ mergedBytes: merged.length, separateBytes: separate, clips: { merged: 1, separate: spans.length }, mergedSeconds: probed.durationSeconds }))
  })
})
