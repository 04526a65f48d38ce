/**
 * Recognition inside a stream task (README "Stream tasks", taskConfig.recognition): footage made
 * with ffmpeg's overlay filter — two faces cut from the sample photos moving across an empty
 * room of ../shared/media, one after the other, each in its own lane — served by the RTSP
 * server; one person is registered, the other is not.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, startDevice, type DeviceProcess } from '../helpers/device.ts'
import { startRtspServer, type RtspServer } from '../helpers/rtsp-server.ts'
import { until } from '../helpers/processes.ts'
import { FFMPEG, PERSON_VIDEO } from '../helpers/video.ts'
import { cropFace, samplePhoto } from '../galleries/faces.ts'

/** Face pictures are this tall in the footage; the registered one crosses the top lane, the other the bottom one. */
const FACE_HEIGHT = 180
const LANES = { registered: 20, unregistered: 230 }
/** Seconds of the footage's 16 s loop when each face is on screen (moving left to right). */
const ON_SCREEN = { registered: [1, 7], unregistered: [9, 15] } as const

/** The test footage: the empty room of the person video, with the two faces overlaid in turn. */
function makeFootage(dir: string, registered: Buffer, unregistered: Buffer): string {
  const background = path.join(dir, 'room.png')
  execFileSync(FFMPEG, ['-v', 'error', '-ss', '1', '-i', PERSON_VIDEO, '-frames:v', '1', '-y', background])
  writeFileSync(path.join(dir, 'registered.png'), registered)
  writeFileSync(path.join(dir, 'unregistered.png'), unregistered)
  const lane = (input: string, face: keyof typeof LANES, out: string) => {
    const [from, to] = ON_SCREEN[face]
    return `[${input}][${face}]overlay=x='40+(t-${from})*80':y=${LANES[face]}:enable='between(t,${from},${to})'[${out}]`
  }
  const file = path.join(dir, 'faces.mp4')
  execFileSync(FFMPEG, [
    '-v', 'error', '-loop', '1', '-framerate', '10', '-i', background,
    '-loop', '1', '-framerate', '10', '-i', path.join(dir, 'registered.png'),
    '-loop', '1', '-framerate', '10', '-i', path.join(dir, 'unregistered.png'),
    '-filter_complex', `[1]scale=-2:${FACE_HEIGHT}[registered];[2]scale=-2:${FACE_HEIGHT}[unregistered];${lane('0', 'registered', 'a')};${lane('a', 'unregistered', 'v')}`,
    '-map', '[v]', '-t', '16', '-r', '10', '-c:v', 'libx264', '-preset', 'veryfast', '-g', '10', '-pix_fmt', 'yuv420p', '-y', file,
  ])
  return file
}

describe('recognition in a stream task (one recognition per tracked object, refreshed on a better view)', () => {
  let device: DeviceProcess
  let mtk: string
  let rtsp: RtspServer
  let dir: string
  const ok = async (route: string, body: unknown) => {
    const answer = (await device.post(route, body, mtk)).body
    expect(answer.resCode, `${route}: ${JSON.stringify(answer.resMsg)}`).toBe(1)
    return answer.resData
  }

  beforeAll(async () => {
    device = await startDevice()
    mtk = await device.adminToken()
    dir = mkdtempSync(path.join(tmpdir(), 'stream-faces-'))
    // sample1's first face is registered; sample6's fourth is in no gallery.
    const [one, six] = [await samplePhoto(device, mtk, 1), await samplePhoto(device, mtk, 6)]
    const registered = await cropFace(one, 0)
    const unregistered = await cropFace(six, 3)
    await ok('/gtw/cwai/Library/AddLibrary', { galleryId: 'staff', name: 'Staff' })
    await ok('/gtw/cwai/Library/AddPerson', { galleryId: 'staff', personId: 'p1', name: 'Alice' })
    await ok('/gtw/cwai/Library/AddPersonImage', { galleryId: 'staff', personId: 'p1', imageBase64: registered.toString('base64') })
    const png = (jpeg: Buffer) => sharp(jpeg).png().toBuffer()
    rtsp = await startRtspServer(makeFootage(dir, await png(registered), await png(unregistered)), await freePort())
  }, 120_000)
  afterAll(async () => {
    await device?.stop()
    device?.cleanup()
    await rtsp?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('names the registered person, calls the other one unknown, once per object unless the answer changes', { timeout: 180_000 }, async () => {
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
      .catch(async (error: Error) => { throw new Error(`${error.message}: ${JSON.stringify(await ok('/v1/cwai/aihost/QueryTaskStatus', { taskId: 'faces' }))}`) })
    const summary = JSON.stringify(events.map((e: any) => [e.payload.objectId, e.payload.name, e.payload.similarity, e.payload.faceBox]))
    const top = events.filter((e: any) => e.payload.faceBox.y < 200)
    const bottom = events.filter((e: any) => e.payload.faceBox.y >= 200)
    for (const event of top) expect(event.payload, summary).toMatchObject({ taskId: 'faces', cameraId, label: 'face', name: 'Alice', personId: 'p1', galleryId: 'staff' })
    for (const event of bottom) expect(event.payload, summary).toMatchObject({ taskId: 'faces', cameraId, label: 'face', name: 'unknown', personId: null, galleryId: null })
    expect(top[0].payload.similarity).toBeGreaterThanOrEqual(0.7)
    expect(bottom[0].payload.similarity).toBeLessThan(0.7)
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
