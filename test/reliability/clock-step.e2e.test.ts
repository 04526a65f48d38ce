import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import sharp from 'sharp'
import { afterEach, describe, expect, test } from 'vitest'
import { freePort, startDevice, type DeviceProcess } from '../helpers/device.ts'
import { addRtspCamera } from '../helpers/cameras.ts'
import { startRtspServer, type RtspServer } from '../helpers/rtsp-server.ts'
import { PERSON_VIDEO } from '../helpers/video.ts'
import { chunkedUpload } from '../helpers/upload-file.ts'
import { faketimeEnv, hasFaketime, step as stepClock } from '../helpers/faketime.ts'
import { until } from '../helpers/processes.ts'
import { cropFace, samplePhoto } from '../galleries/faces.ts'
import { makeFaceFootage } from '../streams/face-footage.ts'

/**
 * A wall-clock step on the running device (docs/system.md "Clocks"): the built device runs under
 * libfaketime (Debian package faketime, provisioned by test/provision.mjs) with its time offset
 * read from a file on every call, and the monotonic clock left real. Writing "+3h" or "-3h" to
 * that file steps the wall clock of the device and of every process it started, as an NTP sync
 * of a box without a battery-backed clock does. Work in flight lives by its real age.
 */
const HOUR = 3_600_000
const FACE = path.resolve(import.meta.dirname, '../../../shared/media/faces/person-celeste.jpg')

interface Stepped {
  device: DeviceProcess
  mtk: string
  step(offset: string): void
  post(route: string, body?: unknown): Promise<any>
}

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function steppedDevice(env: Record<string, string>): Promise<Stepped> {
  const dir = mkdtempSync(path.join(tmpdir(), 'clock-step-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  const offsetFile = path.join(dir, 'faketime')
  const device = await startDevice({
    // Supervised: the factory reset's two steps need it.
    entry: 'supervisor',
    env: {
      ...env,
      ...faketimeEnv(offsetFile),
      UPLOAD_SWEEP_INTERVAL_MS: '500',
    },
  })
  cleanups.push(async () => {
    await device.stop()
    device.cleanup()
  })
  const mtk = await device.adminToken()
  const post = async (route: string, body: unknown = {}) => (await device.post(route, body, mtk)).body
  return { device, mtk, post, step: (offset) => stepClock(offsetFile, offset) }
}

/** The device's wall clock less the test's (real) one, ms. */
async function deviceOffset(device: DeviceProcess): Promise<number> {
  const before = Date.now()
  const probe = (await device.post('/v1/cwai/aihost/Probe')).body
  return Number(probe.resData.timestamp) - (before + Date.now()) / 2
}

/** Reads a stream for up to `ms`; answers how many bytes came. */
async function streamed(response: Response, ms: number): Promise<number> {
  const reader = response.body!.getReader()
  const until = performance.now() + ms
  let bytes = 0
  for (;;) {
    const left = until - performance.now()
    if (left <= 0) break
    const next = await Promise.race([reader.read(), new Promise<null>((resolve) => setTimeout(() => resolve(null), left))])
    if (next === null || next.done) break
    bytes += next.value.length
  }
  await reader.cancel().catch(() => undefined)
  return bytes
}

async function liveCamera(device: DeviceProcess, mtk: string): Promise<string> {
  const rtsp: RtspServer = await startRtspServer(PERSON_VIDEO, await freePort())
  cleanups.push(() => rtsp.stop())
  return addRtspCamera(device, mtk, rtsp.url)
}

/** Right after a step: the upload's next chunk is accepted within a second, and its last completes the same upload. */
async function expectUploadGoesOn(upload: ReturnType<typeof chunkedUpload>, stepped: number) {
  const { uploadId } = upload
  expect(await upload.send(1)).toMatchObject({ resCode: 1, resData: { uploadId, complete: false, nextChunkIndex: '2' } })
  expect(performance.now() - stepped).toBeLessThan(1_000)
  expect(await upload.send(2)).toMatchObject({ resCode: 1, resData: { uploadId, complete: true } })
}

describe('a wall-clock step ends no work in flight (docs/system.md "Clocks")', () => {
  test('libfaketime is installed (test/provision.mjs)', () => {
    expect(hasFaketime()).toBe(true)
  })

  test('+3 h: the next chunk is accepted and completes the same upload; the mtk, a live-view token and a factory-reset token issued before still work', async () => {
    const { device, mtk, post, step } = await steppedDevice({ LIVE_IDLE_TIMEOUT_MS: '20000', FACTORY_RESET_TOKEN_TTL_MS: '20000', UPLOAD_IDLE_TIMEOUT_MS: '20000' })
    const cameraId = await liveCamera(device, mtk)
    const face = readFileSync(FACE)
    const upload = chunkedUpload(device, mtk, face)
    expect(await upload.send(0)).toMatchObject({ resCode: 1, resData: { uploadId: expect.any(String), complete: false, nextChunkIndex: '1' } })
    const live = await post('/gtw/cwai/LiveStream/request', { cameraId })
    expect(live.resMsg).toEqual([])
    const reset = await post('/gtw/cwai/System/RequestFactoryReset')
    expect(reset.resMsg).toEqual([])
    expect(Math.abs(await deviceOffset(device))).toBeLessThan(5_000)

    step('+3h')
    const stepped = performance.now()
    // The step reached the device: its wall clock reads 3 h ahead of the test's.
    expect(Math.abs(await deviceOffset(device) - 3 * HOUR)).toBeLessThan(5_000)
    await expectUploadGoesOn(upload, stepped)
    // The mtk (idle timeout 2 h by default) still signs in.
    expect(await post('/gtw/cwai/Camera/page', {})).toMatchObject({ resCode: 1, resData: { total: 1 } })
    // The live-view token plays; a keep-alive extends the session.
    const play = await fetch(device.url + live.resData.url)
    expect(play.status).toBe(200)
    expect(await streamed(play, 1500)).toBeGreaterThan(0)
    expect(await post('/gtw/cwai/LiveStream/keepAlive', { sessionId: live.resData.sessionId })).toMatchObject({ resCode: 1 })
    // The factory-reset token, seconds old by real time, confirms the reset (the last act of this device).
    expect(performance.now() - stepped).toBeLessThan(15_000)
    expect(await post('/gtw/cwai/System/FactoryReset', { confirmationToken: reset.resData.confirmationToken })).toMatchObject({ resCode: 1, resData: { resetting: true } })
  }, 180_000)

  test('−3 h: the next chunk is accepted and completes the same upload; an idle upload, a live-view token and a factory-reset token still end at their real age', async () => {
    const IDLE_MS = 6000
    const { device, mtk, post, step } = await steppedDevice({ LIVE_IDLE_TIMEOUT_MS: String(IDLE_MS), FACTORY_RESET_TOKEN_TTL_MS: String(IDLE_MS), UPLOAD_IDLE_TIMEOUT_MS: String(IDLE_MS) })
    const cameraId = await liveCamera(device, mtk)
    const face = readFileSync(FACE)
    const idle = chunkedUpload(device, mtk, face)
    expect(await idle.send(0)).toMatchObject({ resCode: 1, resData: { complete: false, nextChunkIndex: '1' } })
    const upload = chunkedUpload(device, mtk, face)
    expect(await upload.send(0)).toMatchObject({ resCode: 1, resData: { complete: false, nextChunkIndex: '1' } })
    const live = await post('/gtw/cwai/LiveStream/request', { cameraId })
    expect(live.resMsg).toEqual([])
    const reset = await post('/gtw/cwai/System/RequestFactoryReset')
    expect(reset.resMsg).toEqual([])
    const issued = performance.now()

    step('-3h')
    const stepped = performance.now()
    expect(Math.abs(await deviceOffset(device) + 3 * HOUR)).toBeLessThan(5_000)
    await expectUploadGoesOn(upload, stepped)
    expect(await post('/gtw/cwai/Camera/page', {})).toMatchObject({ resCode: 1, resData: { total: 1 } })
    const play = await fetch(device.url + live.resData.url)
    expect(play.status).toBe(200)
    expect(await streamed(play, 1000)).toBeGreaterThan(0)

    // Past their real age (the wall clock still reads 3 h before their expiry): each has ended.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, issued + IDLE_MS + 1500 - performance.now())))
    expect((await post('/gtw/cwai/System/FactoryReset', { confirmationToken: reset.resData.confirmationToken })).resMsg[0])
      .toMatchObject({ messageKey: 'api.error.FactoryResetTokenExpired', details: { ttlMs: IDLE_MS } })
    expect((await fetch(device.url + live.resData.url)).status).toBe(401)
    expect((await post('/gtw/cwai/LiveStream/keepAlive', { sessionId: live.resData.sessionId })).resMsg[0]).toMatchObject({ messageKey: 'api.error.LiveSessionNotFound' })
    expect((await idle.send(1)).resMsg[0]).toMatchObject({ messageKey: 'api.error.uploadExpired' })
    // The mtk was used a moment ago: it still works.
    expect(await post('/gtw/cwai/Camera/page', {})).toMatchObject({ resCode: 1 })
  }, 180_000)

  test('+3 h, then back, each during a face\'s pass in front of a stream task: no dwell alarm the face did not stay for, and the object leaves with the face, its dwell its real stay', async () => {
    const { device, mtk, post, step } = await steppedDevice({})
    const dir = mkdtempSync(path.join(tmpdir(), 'clock-step-faces-'))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    // One face crossing the picture from 1 s to 7 s of every 11 s (test/streams/face-footage.ts): each pass is one object.
    const face = await sharp(await cropFace(await samplePhoto(device, mtk, 1), 0)).png().toBuffer()
    const rtsp = await startRtspServer(makeFaceFootage(dir, [{ name: 'face', png: face, y: 40, onScreen: [1, 7] }], 11), await freePort())
    cleanups.push(() => rtsp.stop())
    const cameraId = await addRtspCamera(device, mtk, rtsp.url, 'door')
    expect((await post('/v1/cwai/aihost/TaskCreate', { taskId: 'door', algorithmCode: 'face-detection', cameraId, targetFps: 5 })).resMsg).toEqual([])
    // A face staying a minute raises an alarm; a 6 s pass never does.
    expect((await post('/gtw/cwai/AlarmStrage/add', { policyName: 'lingering', conditions: { taskId: 'door', minDwellS: 60 } })).resMsg).toEqual([])
    const events = async (kind: string) =>
      (await post('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 500, kinds: [kind], taskId: 'door' })).resData.rows.map((e: any) => ({ id: e.id, ...e.payload }))
    const entered = async (after: number) => until(async () => (await events('object.entered')).find((e: any) => e.id > after), 'a face to enter', 60_000)
    const leaves = async (objectId: string) => until(async () => (await events('object.left')).find((e: any) => e.objectId === objectId), `object ${objectId} to leave`, 30_000)

    // Steps while the face is in view: it is seen before and after each.
    const first = await entered(0)
    step('+3h')
    expect(Math.abs(await deviceOffset(device) - 3 * HOUR)).toBeLessThan(5_000)
    const firstLeft = await leaves(first.objectId)
    const second = await entered(first.id)
    step('+0')
    expect(Math.abs(await deviceOffset(device))).toBeLessThan(5_000)
    const secondLeft = await leaves(second.objectId)
    // Each stay as long as the face was in view (6 s, give or take when the frames were decoded), whichever way the clock went.
    for (const left of [firstLeft, secondLeft]) {
      expect(left.dwellMs).toBeGreaterThan(0)
      expect(left.dwellMs).toBeLessThan(6_500)
    }
    expect(await events('alarm.raised')).toEqual([])
    expect((await post('/v1/cwai/aihost/TaskCancle', { taskId: 'door' })).resMsg).toEqual([])
  }, 240_000)
})
