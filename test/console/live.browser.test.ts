/**
 * Live view and clip playback in real Chromium against the real device, a real RTSP camera
 * and ffmpeg: a live tile plays (its picture advances) with the task's boxes over it; a
 * session without keep-alives ends; a recorded clip plays in the page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser } from 'playwright-core'
import { openConsole, plays, signIn } from '../helpers/browser.ts'
import type { DeviceProcess } from '../helpers/device.ts'
import { startCameraConsole, type CameraConsole } from '../helpers/camera-console.ts'
import { childProcesses, until } from '../helpers/processes.ts'

const IDLE_MS = 5000

let rig: CameraConsole
let device: DeviceProcess
let browser: Browser
let mtk: string
let cameraId: string

beforeAll(async () => {
  rig = await startCameraConsole({ LIVE_IDLE_TIMEOUT_MS: String(IDLE_MS), RECORD_CONTINUOUS_CHUNK_SECONDS: '4' })
  ;({ device, browser, mtk, cameraId } = rig)
})
afterAll(async () => {
  await rig?.stop()
})

describe('console: live view and clips', () => {
  it('a live tile plays with the task\'s boxes, which switch off; leaving the page stops the session', { timeout: 180_000 }, async () => {
    expect((await device.post('/v1/cwai/aihost/TaskCreate', { taskId: 'people', algorithmCode: 'person-detector', cameraId, targetFps: 5, motionGating: false }, mtk)).body.resCode).toBe(1)
    const { page, pageErrors, foreignRequests, screenshot } = await openConsole(browser, device.url, 1280)
    await signIn(page, device.url, '#/live')
    await page.getByRole('heading', { name: 'Live', level: 1 }).waitFor()
    const tile = page.getByTestId('live-tile')
    await expect(tile.getAttribute('data-camera')).resolves.toBe(cameraId)
    await plays(page, 'live-video')
    // The footage has someone in the room most of the time: boxes are drawn over the picture.
    await page.waitForFunction(() => Number(document.querySelector<HTMLCanvasElement>('[data-testid="live-overlay"]')?.dataset.boxes ?? 0) > 0, null, { timeout: 120_000 })
    await screenshot('live')
    // The camera's reader, the task's, and one live view.
    expect(childProcesses(device.process.pid!, 'ffmpeg')).toHaveLength(3)
    await page.getByTestId('overlay-toggle').uncheck()
    await expect(page.getByTestId('live-overlay').isHidden()).resolves.toBe(true)
    // Still playing: keep-alives hold the session past its idle timeout.
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS + 1000))
    await plays(page, 'live-video')

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Device', exact: true }).click()
    await until(async () => childProcesses(device.process.pid!, 'ffmpeg').length === 2, 'the live view to stop')
    expect(pageErrors).toEqual([])
    expect(foreignRequests).toEqual([])
    await page.context().close()
    expect((await device.post('/v1/cwai/aihost/TaskCancle', { taskId: 'people' }, mtk)).body.resCode).toBe(1)
  })

  it('a plain <video> plays a session\'s URL, and the stream ends when nobody keeps the session alive', { timeout: 120_000 }, async () => {
    const session = (await device.post('/gtw/cwai/LiveStream/request', { cameraId }, mtk)).body.resData
    const { page, context } = await openConsole(browser, device.url, 800)
    await page.goto(`${device.url}/console/`)
    await page.setContent(`<video data-testid="plain" muted autoplay src="${device.url}${session.url}"></video>`)
    const { after } = await plays(page, 'plain')
    // No keep-alive: the device ends the stream; the video ends where its data ended.
    await page.waitForFunction(() => document.querySelector<HTMLVideoElement>('[data-testid="plain"]')!.ended, null, { timeout: 60_000 })
    const end = await page.getByTestId('plain').evaluate((v: HTMLVideoElement) => v.currentTime)
    expect(end).toBeGreaterThan(after)
    expect((await device.post('/gtw/cwai/LiveStream/keepAlive', { sessionId: session.sessionId }, mtk)).body.resMsg[0].messageKey).toBe('api.error.LiveSessionNotFound')
    await context.close()
  })

  it('recording set from the console makes clips, and a clip plays in the page', { timeout: 180_000 }, async () => {
    const { page, pageErrors, screenshot, context } = await openConsole(browser, device.url, 1280)
    await signIn(page, device.url, '#/recordings')
    await page.getByRole('heading', { name: 'Recordings', level: 1 }).waitFor()
    await page.getByTestId('record-mode').selectOption('continuous')
    await until(async () => (await device.post('/gtw/cwai/System/QueryRecordParam', {}, mtk)).body.resData.cameras[0]?.mode === 'continuous', 'the setting to be stored')
    await until(async () => (await device.post('/gtw/cwai/System/RecordClipPage', {}, mtk)).body.resData.total > 0, 'a clip', 90_000)
    await page.getByRole('button', { name: 'Refresh', exact: true }).click()
    await page.getByTestId('clip-play').first().click()
    await plays(page, 'clip-video')
    await screenshot('recordings')
    expect(pageErrors).toEqual([])
    await context.close()
  })
})
