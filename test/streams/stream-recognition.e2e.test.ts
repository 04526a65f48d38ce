/**
 * Recognition inside a stream task (README "Stream tasks", taskConfig.recognition): footage made
 * with ffmpeg's overlay filter — two faces cut from the sample photos moving across an empty
 * room of ../shared/media, one after the other, each in its own lane — served by the RTSP
 * server; one person is registered, the other is not.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import sharp from 'sharp'
import { expect } from 'vitest'
import { freePort, type DeviceProcess } from '../helpers/device.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { startRtspServer, type RtspServer } from '../helpers/rtsp-server.ts'
import { until } from '../helpers/processes.ts'
import { cropFace, enrollAlice, samplePhoto } from '../galleries/faces.ts'
import { makeFaceFootage, type FaceLane } from './face-footage.ts'

/** The recognizer's scoreThreshold in the shipped face-recognition manifest. */
const DEFAULT_THRESHOLD: number = JSON.parse(readFileSync(path.join(import.meta.dirname, '../../models/manifests/face-recognition.json'), 'utf8'))
  .nodes.find((n: { action: string }) => n.action === 'recognizer').scoreThreshold

/** The registered face crosses the top lane in the first half of the footage's 16 s loop, the other one the bottom lane in the second. */
const lanes = (registered: Buffer, unregistered: Buffer): FaceLane[] => [
  { name: 'registered', png: registered, y: 20, onScreen: [1, 7] },
  { name: 'unregistered', png: unregistered, y: 230, onScreen: [9, 15] },
]

test.describe('recognition in a stream task (one recognition per tracked object, refreshed on a better view)', () => {
  let device: DeviceProcess
  let mtk: string
  let rtsp: RtspServer
  let dir: string
  const ok = async (route: string, body: unknown) => {
    const answer = (await device.post(route, body, mtk)).body
    expect(answer.resCode, `${route}: ${JSON.stringify(answer.resMsg)}`).toBe(1)
    return answer.resData
  }

  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
    dir = mkdtempSync(path.join(tmpdir(), 'stream-faces-'))
    // sample1's first face is registered; sample6's fourth is in no gallery.
    const [one, six] = [await samplePhoto(device, mtk, 1), await samplePhoto(device, mtk, 6)]
    const registered = await cropFace(one, 0)
    const unregistered = await cropFace(six, 3)
    await enrollAlice(device, mtk, registered)
    const png = (jpeg: Buffer) => sharp(jpeg).png().toBuffer()
    rtsp = await startRtspServer(makeFaceFootage(dir, lanes(await png(registered), await png(unregistered)), 16), await freePort())
  }, 120_000)
  test.afterAll(async () => {
    await rtsp?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  test('names the registered person, calls the other one unknown, once per object unless the answer changes', { timeout: 180_000 }, async () => {
    let added = await device.post('/gtw/cwai/Camera/add', { cameraName: 'faces', sourceType: 'rtsp', url: rtsp.url }, mtk)
    for (let retry = 0; retry < 3 && added.body.resMsg[0]?.retryable; retry++) {
      await new Promise((resolve) => setTimeout(resolve, 1000))
      added = await device.post('/gtw/cwai/Camera/add', { cameraName: 'faces', sourceType: 'rtsp', url: rtsp.url }, mtk)
    }
    expect(added.body.resMsg).toEqual([])
    const cameraId = added.body.resData.cameraId
    await ok('/v1/cwai/aihost/TaskCreate', {
      taskId: 'faces', algorithmCode: 'face-detection', cameraId, targetFps: 5, taskConfig: { recognition: { galleryIds: ['staff'] } },
    })
    const recognized = async () => (await ok('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 500, kinds: ['object.recognized'] })).rows
      .filter((e: any) => e.payload.taskId === 'faces').reverse()
    // Two passes of each face: the second pass of the unregistered one has left the picture.
    const events = await until(async () => {
      const all = await recognized()
      const lanes = new Set(all.map((e: any) => (e.payload.faceBox.y < 200 ? 'top' : 'bottom')))
      return all.length >= 2 && lanes.size === 2 && all
    }, 'both faces to be recognized', 120_000)
      .catch(async (error: Error) => {
        // Printed at once, so a run's output keeps it even where the failure report is cut short.
        const diagnosis = [
          `task: ${JSON.stringify(await ok('/v1/cwai/aihost/QueryTaskStatus', { taskId: 'faces' }))}`,
          `recognized so far: ${JSON.stringify((await recognized()).map((e: any) => [e.payload.objectId, e.payload.name, e.payload.faceBox]))}`,
          `RTSP pipelines: ${JSON.stringify(rtsp.media.map((m) => ({ id: m.id, startedAt: m.startedAt, loops: m.loops.length })))}`,
          `device warnings: ${device.logs.filter((l) => Number(l.level) >= 40).slice(-20).map((l) => JSON.stringify(l)).join('\n')}`,
        ].join('\n')
        console.error(`stream-recognition: ${error.message}\n${diagnosis}`)
        throw new Error(`${error.message}\n${diagnosis}`)
      })
    const summary = JSON.stringify(events.map((e: any) => [e.payload.objectId, e.payload.name, e.payload.similarity, e.payload.faceBox]))
    const top = events.filter((e: any) => e.payload.faceBox.y < 200)
    const bottom = events.filter((e: any) => e.payload.faceBox.y >= 200)
    for (const event of top) expect(event.payload, summary).toMatchObject({ taskId: 'faces', cameraId, label: 'face', name: 'Alice', personId: 'p1', galleryId: 'staff' })
    for (const event of bottom) expect(event.payload, summary).toMatchObject({ taskId: 'faces', cameraId, label: 'face', name: 'unknown', personId: null, galleryId: null })
    // The task sets no threshold: face-recognition's default (docs/galleries.md "Threshold").
    expect(top[0].payload.similarity).toBeGreaterThanOrEqual(DEFAULT_THRESHOLD)
    expect(bottom[0].payload.similarity).toBeLessThan(DEFAULT_THRESHOLD)
    // One event per object while its answer stays the same (better views are recognized again silently).
    const objects = events.map((e: any) => e.payload.objectId)
    expect(new Set(objects).size, summary).toBe(objects.length)
    // Each recognized face is a tracked object that entered.
    const entered = (await ok('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 500, kinds: ['object.entered'] })).rows
      .filter((e: any) => e.payload.taskId === 'faces').map((e: any) => e.payload.objectId)
    for (const objectId of objects) expect(entered).toContain(objectId)
    await ok('/v1/cwai/aihost/TaskCancle', { taskId: 'faces' })
  })
})
