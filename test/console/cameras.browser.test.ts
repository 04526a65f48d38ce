/**
 * The console's Cameras page and stream tasks (spec 4.9, 4.10 Camera and Task; README "Cameras",
 * "Stream tasks") in real Chromium against the real device, real ffmpeg and GStreamer's RTSP
 * server on loopback playing the person footage: a new user adds a camera, previews it, starts
 * a person-detection task on it and sees its events arrive; deletion is refused while the task
 * reads the camera, unless forced; every screen passes axe-core.
 */
import { readFileSync } from 'node:fs'
import sharp from 'sharp'
import { expect } from 'vitest'
import type { Page } from 'playwright-core'
import { seriousViolations } from '../helpers/axe.ts'
import { browserTest as test, navigate, openConsole, type ConsolePage } from '../helpers/browser.ts'
import { CHANGED_PASSWORD, freePort, type DeviceProcess } from '../helpers/device.ts'
import { startRtspServer, type RtspServer } from '../helpers/rtsp-server.ts'
import { PERSON_VIDEO, videoFacts } from '../helpers/video.ts'
import { MESSAGE_TEXT } from '../../runtime/console/messages.ts'

const CAMERA_USER = 'cam-user'
const CAMERA_PASSWORD = 's3cret-Cam'
const TASK = 'door-people'
const facts = videoFacts(PERSON_VIDEO)

let device: DeviceProcess
let rtsp: RtspServer
let mtk: string

test.beforeAll(async ({ device: started, mtk: session }) => {
  device = started
  mtk = session
  rtsp = await startRtspServer(PERSON_VIDEO, await freePort(), '/cam', `${CAMERA_USER}:${CAMERA_PASSWORD}`)
})
test.afterAll(async () => {
  await rtsp?.stop()
})

/** The device's own view of the cameras and tasks (not the page's). */
const cameras = async () => (await device.post('/gtw/cwai/Camera/page', { pageNum: 1, pageSize: 100 }, mtk)).body.resData.rows as Record<string, any>[]
const taskStatus = async (taskId: string) => (await device.post('/v1/cwai/aihost/QueryTaskStatus', { taskId }, mtk)).body

async function signIn(page: Page, hash: string) {
  await page.goto(`${device.url}/console/${hash}`)
  await page.getByLabel('Password').fill(CHANGED_PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
}

/** The heading is shown and nothing in the page is still loading. */
async function ready(page: Page, heading: string) {
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
  await page.waitForFunction(() => !document.querySelector('main')?.textContent?.includes('Loading…'))
}

const sideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
const cameraRow = (page: Page, name: string) => page.locator('[data-testid="cameras"] tbody tr').filter({ has: page.locator('th', { hasText: new RegExp(`^${name}$`) }) })

/**
 * Submits the add form. A just-started RTSP server may refuse its first session while it
 * prepares the media under load: the device answers that as retryable, and a user tries again.
 */
async function addCamera(page: Page) {
  for (let attempt = 0; ; attempt++) {
    await page.getByTestId('camera-save').click()
    await page.getByTestId('camera-step').waitFor({ state: 'detached', timeout: 90_000 })
    if (await page.getByTestId('cameras-notice').isVisible()) return
    const retryable = ['api.error.CameraUnreachable', 'api.error.CameraSourceFailed'].includes(String(await page.getByTestId('error-key').textContent()))
    if (!retryable || attempt === 3) throw new Error(`add refused: ${await page.getByTestId('error').textContent()}`)
    await page.waitForTimeout(2000)
  }
}

test.describe('console: cameras and stream tasks', () => {
  let session: ConsolePage

  test('adds an RTSP camera with credentials, shows it online, previews a frame, never shows the password (1440 px)', { timeout: 240_000 }, async ({ browser }) => {
    session = await openConsole(browser, device.url, 1440)
    const { page } = session
    await signIn(page, '#/cameras')
    await ready(page, 'Cameras')
    await expect.poll(() => page.title()).toBe('Cameras · Edge AI device')
    await page.getByTestId('no-cameras').waitFor()
    const found = await seriousViolations(page, 'Cameras, empty')

    await page.getByTestId('camera-name').fill('door')
    expect(await page.getByTestId('camera-type').inputValue()).toBe('rtsp')
    await page.getByTestId('camera-url').fill(rtsp.url)
    await page.getByTestId('camera-username').fill(CAMERA_USER)
    await page.getByTestId('camera-password').fill(CAMERA_PASSWORD)
    await addCamera(page)
    expect(await page.getByTestId('cameras-notice').textContent()).toBe('Added camera door.')
    // The form is empty again, ready for the next camera.
    expect(await page.getByTestId('camera-name').inputValue()).toBe('')
    expect(await page.getByTestId('camera-password').inputValue()).toBe('')

    const row = cameraRow(page, 'door')
    await expect.poll(() => row.getByTestId('camera-status').textContent(), { timeout: 60_000 }).toBe('Online')
    expect(await row.getByTestId('camera-size').textContent()).toBe(`${facts.width} × ${facts.height}`)
    expect(await row.getByTestId('camera-fps').textContent()).toBe(`${facts.fps} fps`)
    const shownUrl = rtsp.url.replace('rtsp://', `rtsp://${CAMERA_USER}:***@`)
    expect(await row.locator('td[data-label="Source"] code').textContent()).toBe(shownUrl)
    expect(await page.locator('main').textContent()).not.toContain(CAMERA_PASSWORD)
    // The device agrees.
    expect(await cameras()).toMatchObject([{ cameraName: 'door', sourceType: 'rtsp', status: 'online', url: shownUrl, username: CAMERA_USER }])

    // The preview: the current frame, as large as the source.
    await page.getByRole('button', { name: 'Preview door' }).click()
    const image = page.getByTestId('capture-image')
    await image.waitFor({ timeout: 60_000 })
    await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(facts.width)
    expect(await image.evaluate((img: HTMLImageElement) => img.naturalHeight)).toBe(facts.height)
    expect(await page.getByTestId('capture-caption').textContent()).toMatch(new RegExp(`^${facts.width} × ${facts.height} · `))
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('preview-heading')
    await session.screenshot('cameras')

    // Edit: the stored password is not shown back; a new name is all that changes.
    await page.getByRole('button', { name: 'Edit door' }).click()
    await page.getByRole('heading', { name: 'Edit door' }).waitFor()
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('camera-form-heading')
    expect(await page.getByTestId('camera-url').inputValue()).toBe(rtsp.url)
    expect(await page.getByTestId('camera-username').inputValue()).toBe(CAMERA_USER)
    expect(await page.getByTestId('camera-password').inputValue()).toBe('')
    found.push(...await seriousViolations(page, 'Cameras, online, preview, edit (1440 px)'))
    await page.getByTestId('camera-name').fill('front door')
    await page.getByTestId('camera-save').click()
    await page.getByText('Saved camera front door.').waitFor()
    expect(await cameras()).toMatchObject([{ cameraName: 'front door', status: 'online', url: shownUrl }])
    await cameraRow(page, 'front door').waitFor()

    expect(found, found.join('\n')).toEqual([])
    expect(session.foreignRequests).toEqual([])
  })

  test('starts a person-detection task from the camera, shows it running with its rates, and shows object.entered with its snapshot as it arrives', { timeout: 300_000 }, async () => {
    const { page, screenshot } = session
    const cameraId = (await cameras())[0]!.cameraId
    await page.getByRole('link', { name: 'Tasks of front door' }).click()
    await ready(page, 'Tasks')
    expect(page.url()).toContain(`#/tasks?camera=${cameraId}`)
    expect(await page.getByTestId('stream-filter').textContent()).toContain('the camera front door')
    await page.getByTestId('no-stream-tasks').waitFor()
    // The camera is chosen, and the person detector offered first.
    expect(await page.getByTestId('stream-camera').inputValue()).toBe(cameraId)
    expect(await page.getByTestId('stream-algorithm').inputValue()).toBe('person-detector')
    expect(await page.getByTestId('stream-fps').inputValue()).toBe('5')
    expect(await page.getByTestId('stream-motion').isChecked()).toBe(true)
    await page.getByTestId('stream-task-id').fill(TASK)
    await page.getByTestId('stream-create').click()
    await page.getByTestId('stream-notice').waitFor({ timeout: 150_000 })
    expect(await page.getByTestId('stream-notice').textContent()).toBe(`Started task ${TASK}.`)

    // The details open on the new task and refresh by themselves.
    const detail = page.getByTestId('stream-detail')
    await detail.waitFor()
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('stream-detail-heading')
    const field = (name: string) => detail.locator(`[data-field="${name}"]`).textContent()
    await expect.poll(() => field('state'), { timeout: 60_000 }).toBe('Running')
    await expect.poll(async () => Number(/^([\d.]+) fps/.exec((await field('processedFps')) ?? '')?.[1] ?? 0), { timeout: 60_000 }).toBeGreaterThan(0)
    expect(await field('processedFps')).toMatch(/ of 5\.0 fps wanted$/)
    const row = page.locator(`[data-testid="stream-tasks"] tr[data-task-id="${TASK}"]`)
    // The list is read again every 3 s.
    await expect.poll(() => row.getByTestId('stream-state').textContent()).toBe('Running')
    expect(await detail.getByTestId('stream-events-state').textContent()).toBe('Live')

    // A person walks in (the footage has one in view most of the time, with short empty stretches).
    const entered = detail.locator('li[data-kind="object.entered"]').first()
    await entered.waitFor({ timeout: 120_000 })
    const snapshot = entered.getByTestId('event-snapshot')
    await snapshot.waitFor()
    await expect.poll(() => snapshot.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBeGreaterThan(0)
    const objectId = await entered.getAttribute('data-object-id')
    expect(await entered.getByTestId('event-text').textContent()).toMatch(/^person entered \(\d+\.\d % sure\)$/)

    // The same event as the device stored it, and its snapshot the same picture the page shows.
    const stored = (await device.post('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 100, kinds: ['object.entered'] }, mtk)).body.resData.rows
      .find((e: any) => e.payload.taskId === TASK && e.payload.objectId === objectId)
    expect(stored.payload).toMatchObject({ taskId: TASK, cameraId, label: 'person' })
    const jpeg = Buffer.from(await (await fetch(device.url + stored.payload.snapshotUrl, { headers: { mtk } })).arrayBuffer())
    const { width, height } = await sharp(jpeg).metadata()
    expect(await snapshot.evaluate((img: HTMLImageElement) => [img.naturalWidth, img.naturalHeight])).toEqual([width, height])
    // The run details are read again every 2 s.
    await expect.poll(() => field('objectsEntered')).not.toBe('0')
    await screenshot('stream-task')

    const found = await seriousViolations(page, 'Tasks, stream task running with events (1440 px)')
    expect(found, found.join('\n')).toEqual([])
    expect(session.foreignRequests).toEqual([])
  })

  test('refuses to delete the camera while the task reads it, names the task, and leads to it; the same screens pass axe at 375 px', { timeout: 240_000 }, async ({ browser }) => {
    const narrow = await openConsole(browser, device.url, 375)
    const { page } = narrow
    await signIn(page, '#/cameras')
    await ready(page, 'Cameras')
    const row = cameraRow(page, 'front door')
    await row.waitFor()
    expect(await sideways(page)).toBe(0)
    const found = await seriousViolations(page, 'Cameras (375 px)')

    await page.getByRole('button', { name: 'Delete front door' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete front door?' })
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click()
    await dialog.getByTestId('error').waitFor()
    expect(await dialog.getByTestId('error-key').textContent()).toBe('api.error.CameraInUse')
    expect(await dialog.getByTestId('error-text').textContent()).toBe(MESSAGE_TEXT['api.error.CameraInUse'])
    expect(await dialog.locator('[data-fact="Tasks using it"]').textContent()).toBe(TASK)
    await narrow.screenshot('camera-in-use')
    found.push(...await seriousViolations(page, 'Camera delete refused (375 px)'))
    // Not forced: the camera stays, online, and the task keeps running.
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'detached' })
    expect(await cameras()).toMatchObject([{ cameraName: 'front door', status: 'online' }])
    expect((await taskStatus(TASK)).resData.state).toBe('running')

    // The error's next step opens the tasks of that camera.
    await page.getByRole('button', { name: 'Delete front door' }).click()
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click()
    await dialog.getByTestId('error-next').click()
    await ready(page, 'Tasks')
    await page.locator(`[data-testid="stream-tasks"] tr[data-task-id="${TASK}"]`).waitFor()
    await page.getByRole('button', { name: `Details of ${TASK}` }).click()
    await page.getByTestId('stream-detail').locator('[data-field="state"]').waitFor()
    expect(await sideways(page)).toBe(0)
    await narrow.screenshot('stream-task')
    found.push(...await seriousViolations(page, 'Tasks, stream task details (375 px)'))

    expect(found, found.join('\n')).toEqual([])
    expect(narrow.pageErrors).toEqual([])
    expect(narrow.foreignRequests).toEqual([])
    await narrow.context.close()
  })

  test('stops, starts and deletes stream tasks in a batch, and deletes a camera in use when forced (1440 px)', { timeout: 240_000 }, async () => {
    const { page } = session
    const row = page.locator(`[data-testid="stream-tasks"] tr[data-task-id="${TASK}"]`)
    await page.getByRole('checkbox', { name: `Select ${TASK}` }).check()
    await page.getByRole('button', { name: 'Stop selected' }).click()
    await expect.poll(() => page.getByTestId('stream-notice').textContent()).toBe('Stopped 1 of 1 task.')
    expect(await row.getByTestId('stream-state').textContent()).toBe('Stopped')
    expect((await taskStatus(TASK)).resData).toMatchObject({ state: 'disabled', enabled: false })
    await page.getByRole('button', { name: 'Start selected' }).click()
    await expect.poll(() => page.getByTestId('stream-notice').textContent()).toBe('Started 1 of 1 task.')
    await expect.poll(async () => (await taskStatus(TASK)).resData.enabled).toBe(true)

    // Forced, the camera goes; the task stays and waits, saying why.
    await navigate(page, 'Cameras')
    await ready(page, 'Cameras')
    await page.getByRole('button', { name: 'Delete front door' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete front door?' })
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click()
    await dialog.getByRole('button', { name: 'Delete anyway' }).click()
    await dialog.waitFor({ state: 'detached' })
    expect(await page.getByTestId('cameras-notice').textContent()).toBe('Deleted camera front door.')
    // Its row is gone: the focus goes to the list.
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('camera-list-heading')
    await page.getByTestId('no-cameras').waitFor()
    expect(await cameras()).toEqual([])
    expect((await taskStatus(TASK)).resData).toMatchObject({ state: 'waiting', stateReason: 'cameraDeleted' })

    await navigate(page, 'Tasks')
    await ready(page, 'Tasks')
    await page.getByRole('checkbox', { name: 'Select all stream tasks' }).check()
    await page.getByRole('button', { name: 'Delete selected' }).click()
    await page.getByRole('dialog', { name: `Delete ${TASK}?` }).getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByTestId('no-stream-tasks').waitFor()
    expect(await page.getByTestId('stream-notice').textContent()).toBe('Deleted 1 of 1 task.')
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('stream-list-heading')
    expect((await taskStatus(TASK)).resMsg[0].messageKey).toBe('api.error.NotCreated')

    expect(session.pageErrors).toEqual([])
    expect(session.foreignRequests).toEqual([])
    await session.context.close()
  })
})

test.describe('console: a video file as a camera', () => {
  test('uploads the video through the chunked upload (purpose video), plays it as a camera, and deletes it', { timeout: 180_000 }, async ({ browser }) => {
    const { page, context, pageErrors } = await openConsole(browser, device.url, 1440)
    await signIn(page, '#/detect')
    await ready(page, 'Detection')
    // The page loads on first use (its own chunk); the focus a new page's heading gets goes on to it.
    await page.getByRole('link', { name: 'Cameras', exact: true }).click()
    await ready(page, 'Cameras')
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Cameras')
    await page.getByTestId('camera-name').fill('lobby')
    await page.getByTestId('camera-type').selectOption('file')
    await page.getByTestId('camera-video').setInputFiles({ name: 'one-by-one.mp4', mimeType: 'video/mp4', buffer: readFileSync(PERSON_VIDEO) })
    await page.getByTestId('camera-save').click()
    await page.getByText('Added camera lobby.').waitFor({ timeout: 90_000 })
    const row = cameraRow(page, 'lobby')
    await expect.poll(() => row.getByTestId('camera-status').textContent(), { timeout: 60_000 }).toBe('Online')
    expect(await row.locator('td[data-label="Source"] code').textContent()).toBe('one-by-one.mp4')
    expect(await cameras()).toMatchObject([{ cameraName: 'lobby', sourceType: 'file', videoName: 'one-by-one.mp4', width: facts.width, height: facts.height, fps: facts.fps }])

    // Not in use: one confirmation deletes it.
    await page.getByRole('button', { name: 'Delete lobby' }).click()
    await page.getByRole('dialog', { name: 'Delete lobby?' }).getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByTestId('no-cameras').waitFor()
    expect(await cameras()).toEqual([])
    expect(pageErrors).toEqual([])
    await context.close()
  })
})
