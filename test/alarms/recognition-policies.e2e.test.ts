/**
 * Alarm policies on what a stream task's recognition saw (README "Alarm policies", conditions
 * `recognition`): footage of a registered face crossing an empty room of ../shared/media
 * (ffmpeg's overlay filter, the recognition stream test's helper) on the real device, sidecar
 * and RTSP server. A watch-list policy names the person; once the person is deleted from the
 * gallery, the same face is a stranger.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import sharp from 'sharp'
import { expect } from 'vitest'
import { addRtspCamera } from '../helpers/cameras.ts'
import { freePort, type DeviceProcess } from '../helpers/device.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { until } from '../helpers/processes.ts'
import { startRtspServer, type RtspServer } from '../helpers/rtsp-server.ts'
import { cropFace, enrollAlice, samplePhoto } from '../galleries/faces.ts'
import { makeFaceFootage } from '../streams/face-footage.ts'

/** The face is on screen from 1 s to 7 s of each 11 s loop: each pass is a new object (the tracker lets it leave after 2.5 s). */
const ON_SCREEN = [1, 7] as const
const LOOP_S = 11
/** The recognizer's default threshold (README "Face galleries"). */
const THRESHOLD = 0.7

test.describe('alarm policies with recognition conditions (watch list, stranger) on a camera', () => {
  let device: DeviceProcess
  let mtk: string
  let rtsp: RtspServer
  let dir: string
  const post = (route: string, body: unknown) => device.post(route, body, mtk)
  const ok = async (route: string, body: unknown) => {
    const answer = (await post(route, body)).body
    expect(answer.resMsg, `${route}: ${JSON.stringify(answer.resMsg)}`).toEqual([])
    return answer.resData
  }
  /** What the device saw, printed at once (a run's output keeps it where the failure report is cut short). */
  const diagnose = async (error: Error): Promise<never> => {
    const events = (await ok('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 500, taskId: 'door' })).rows.reverse()
    const diagnosis = [
      `task: ${JSON.stringify(await ok('/v1/cwai/aihost/QueryTaskStatus', { taskId: 'door' }))}`,
      `events: ${JSON.stringify(events.map((e: any) => [e.kind, e.payload.objectId, e.time, e.payload.name ?? '', e.payload.box]))}`,
      `RTSP pipelines: ${JSON.stringify(rtsp.media.map((m) => ({ id: m.id, startedAt: m.startedAt, loops: m.loops.length })))}`,
      `device warnings: ${device.logs.filter((l) => Number(l.level) >= 40).slice(-20).map((l) => JSON.stringify(l)).join('\n')}`,
    ].join('\n')
    console.error(`recognition-policies: ${error.message}\n${diagnosis}`)
    throw new Error(`${error.message}\n${diagnosis}`)
  }
  const refusal = async (body: unknown) => (await post('/gtw/cwai/AlarmStrage/add', body)).body.resMsg[0]
  const eventsOf = async (kind: string) =>
    (await ok('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 500, kinds: [kind], taskId: 'door' })).rows.reverse().map((e: any) => ({ id: e.id, ...e.payload }))

  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
    dir = mkdtempSync(path.join(tmpdir(), 'watch-list-'))
    const face = await cropFace(await samplePhoto(device, mtk, 1), 0)
    await enrollAlice(device, mtk, face)
    const footage = makeFaceFootage(dir, [{ name: 'alice', png: await sharp(face).png().toBuffer(), y: 40, onScreen: ON_SCREEN }], LOOP_S)
    rtsp = await startRtspServer(footage, await freePort())
  }, 120_000)
  test.afterAll(async () => {
    await rtsp?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  test('a watch-list policy raises one alarm per pass naming the person; deleted from the gallery, the face raises the stranger policy instead', { timeout: 300_000 }, async () => {
    const cameraId = await addRtspCamera(device, mtk, rtsp.url, 'door')

    // A task that does not recognize faces: a recognition condition on it is refused, and so is one without a task.
    await ok('/v1/cwai/aihost/TaskCreate', { taskId: 'door', algorithmCode: 'face-detection', cameraId, targetFps: 5 })
    const watch = { policyName: 'watch list', conditions: { taskId: 'door', recognition: { seen: 'watchList', galleryIds: ['staff'] } } }
    expect(await refusal(watch)).toMatchObject({
      messageKey: 'api.error.AlarmConditionUnavailable', details: { field: '/conditions/recognition', reason: expect.stringContaining('does not recognize faces') },
    })
    expect(await refusal({ ...watch, conditions: { cameraId, recognition: { seen: 'stranger' } } }))
      .toMatchObject({ messageKey: 'api.error.AlarmConditionUnavailable', details: { field: '/conditions/taskId' } })
    await ok('/gtw/cwai/Task/update', { taskId: 'door', taskConfig: { recognition: { galleryIds: ['staff'] } } })
    // Galleries the task does not search could never match; a stranger belongs to no gallery.
    expect(await refusal({ ...watch, conditions: { taskId: 'door', recognition: { seen: 'watchList', galleryIds: ['visitors'] } } }))
      .toMatchObject({ messageKey: 'api.error.AlarmConditionUnavailable', details: { field: '/conditions/recognition/galleryIds' } })
    expect(await refusal({ ...watch, conditions: { taskId: 'door', recognition: { seen: 'stranger', galleryIds: ['staff'] } } }))
      .toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/conditions/recognition/galleryIds' } })

    const { policyId: watchId } = await ok('/gtw/cwai/AlarmStrage/add', watch)
    const { policyId: strangerId } = await ok('/gtw/cwai/AlarmStrage/add', { policyName: 'strangers', conditions: { taskId: 'door', recognition: { seen: 'stranger' } } })
    const alarms = async (policyId: string) => (await eventsOf('alarm.raised')).filter((a: any) => a.policyId === policyId)

    // Alice's first pass: one watch-list alarm naming her, the similarity her recognition found; no stranger.
    const [first] = await until(async () => { const a = await alarms(watchId); return a.length > 0 && a }, 'a watch-list alarm', 120_000)
    const recognized = (await eventsOf('object.recognized')).find((e: any) => e.objectId === first.objectId)
    expect(recognized).toMatchObject({ name: 'Alice', personId: 'p1' })
    expect(first).toMatchObject({
      taskId: 'door', cameraId, alarmType: 'policy', policyName: 'watch list', objectId: first.objectId, label: 'face',
      personId: 'p1', name: 'Alice', galleryId: 'staff', similarity: recognized.similarity, message: 'watch list: face Alice',
    })
    expect(first.similarity).toBeGreaterThanOrEqual(THRESHOLD)
    await until(async () => (await eventsOf('object.left')).some((e: any) => e.objectId === first.objectId), 'the first pass to end', 60_000)
      .catch(diagnose)
    expect((await alarms(watchId)).filter((a: any) => a.objectId === first.objectId)).toHaveLength(1)
    expect(await alarms(strangerId)).toEqual([])

    // Alice deleted while the task is off (no recognition in flight): her next pass is a stranger's.
    await ok('/gtw/cwai/Task/switch', { taskId: 'door', enabled: false })
    await ok('/gtw/cwai/Library/DeletePerson', { galleryId: 'staff', personId: 'p1' })
    const before = (await eventsOf('alarm.raised')).at(-1).id
    await ok('/gtw/cwai/Task/switch', { taskId: 'door', enabled: true })
    const [stranger] = await until(async () => { const a = await alarms(strangerId); return a.length > 0 && a }, 'a stranger alarm', 120_000)
    expect(stranger).toMatchObject({ policyName: 'strangers', label: 'face', personId: null, name: 'unknown', galleryId: null, message: 'strangers: face unknown' })
    expect(stranger.similarity).toBeLessThan(THRESHOLD)
    await until(async () => (await eventsOf('object.left')).some((e: any) => e.objectId === stranger.objectId), 'the stranger\'s pass to end', 60_000)
      .catch(diagnose)
    // Since the deletion: stranger alarms only, one per pass (a later pass may have begun meanwhile).
    const after = (await eventsOf('alarm.raised')).filter((a: any) => a.id > before)
    expect(after[0]).toMatchObject({ policyId: strangerId, objectId: stranger.objectId })
    expect(after.filter((a: any) => a.policyId !== strangerId)).toEqual([])
    expect(new Set(after.map((a: any) => a.objectId)).size).toBe(after.length)
    await ok('/v1/cwai/aihost/TaskCancle', { taskId: 'door' })
  })
})
