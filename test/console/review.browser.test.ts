/**
 * The console as a review desk (docs/console-and-cli.md "Review", "Navigation") in real
 * Chromium against the real device, ffmpeg and GStreamer's RTSP server on loopback playing the
 * person footage (10 fps, shared/media README): a person walking in appears on the Review page
 * as one card, pushed over the event WebSocket without a click, with its snapshot (enlarged on
 * a click), named camera and task, then left with its dwell and its clip playing; an alarm raises a toast on another
 * page and its card shows the policy by name; the navigation folds behind a menu on a phone; a
 * task is named in the Tasks form and a rate above the camera's is refused with advice naming
 * the camera's rate; the Detection page starts on a detector and forgets a refused file; the
 * Logs page is not flooded by its own polling. One device and camera for the whole file.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seriousViolations } from '../helpers/axe.ts'
import { navigate, openConsole, plays, ready, signIn, type ConsolePage } from '../helpers/browser.ts'
import { startCameraConsole, type CameraConsole } from '../helpers/camera-console.ts'
import { until } from '../helpers/processes.ts'
import { PERSON_VIDEO, videoFacts } from '../helpers/video.ts'
import { NAV_SECTIONS, PAGES } from '../../runtime/console/pages.ts'

const TASK = 'review-door'
const TASK_NAME = 'Front door people'
/** shared/media/README.md: the footage's frame rate. */
const CAMERA_FPS = 10
/**
 * The camera's own width (the footage, 768 × 432, read from the file): a snapshot is cut from the camera's frame at its own
 * size, not from the analysed frame (512 wide for the person detector; docs/cameras-and-stream-tasks.md "Snapshots").
 */
const CAMERA_WIDTH = videoFacts(PERSON_VIDEO).width
/** models/manifests/person-detector.json: the detector's input width, the analysed frame's a snapshot falls back to. */
const ANALYSIS_WIDTH = 512
const SAMPLE = path.resolve('node_modules/@vladmandic/face-api/demo/sample1.jpg')

let rig: CameraConsole
const api = (route: string, body: unknown) => rig.api(route, body)
const eventsOf = async (kinds: string[]) => (await api('/gtw/cwai/Event/EventPage', { kinds, taskId: TASK, pageSize: 500 })).rows

beforeAll(async () => {
  // The review desk with full-resolution snapshots, which a device turns on (off by default: docs/cameras-and-stream-tasks.md "Snapshots").
  rig = await startCameraConsole({ SNAPSHOT_FULL_RESOLUTION: 'true' }, 'office')
})
afterAll(async () => {
  await rig?.stop()
})

describe('console: the review desk', () => {
  let session: ConsolePage

  it('shows a person walking in as one card within 2 s of its object.entered on the WebSocket, without a click, with its snapshot and names', { timeout: 240_000 }, async () => {
    session = await openConsole(rig.browser, rig.device.url, 1280)
    const { page } = session
    // In the page, before the console's own handler sees it: when each object.entered frame arrives on a WebSocket.
    await page.addInitScript(() => {
      const arrived: Record<string, number> = {}
      const Native = window.WebSocket
      class Watched extends Native {
        constructor(url: string | URL, protocols?: string | string[]) {
          super(url, protocols)
          this.addEventListener('message', (message) => {
            const text = String(message.data)
            if (!text.includes('"object.entered"')) return
            const frame = JSON.parse(text) as { type: string; event?: { kind: string; payload: { objectId: string } } }
            if (frame.type === 'event' && frame.event?.kind === 'object.entered') arrived[frame.event.payload.objectId] ??= performance.now()
          })
        }
      }
      Object.assign(window, { WebSocket: Watched, enteredArrived: arrived })
    })
    await signIn(page, rig.device.url, '#/review')
    await ready(page, 'Review')
    await page.getByTestId('review-empty').waitFor()
    await expect.poll(() => page.getByTestId('review-state').textContent()).toBe('Live')
    // When each card is first in the page.
    await page.evaluate(() => {
      const shown: Record<string, number> = {}
      Object.assign(window, { cardShown: shown })
      new MutationObserver(() => {
        for (const card of document.querySelectorAll('[data-testid="review-card"]')) shown[card.getAttribute('data-object-id')!] ??= performance.now()
      }).observe(document.body, { childList: true, subtree: true })
    })

    // Event clips of each visit (docs/recording-and-live-view.md "Recording"), for the card's clip.
    await api('/gtw/cwai/System/SetRecordParam', { cameras: [{ cameraId: rig.cameraId, mode: 'events', preRollSeconds: 1, postRollSeconds: 1 }] })
    await api('/v1/cwai/aihost/TaskCreate', { taskId: TASK, taskName: TASK_NAME, algorithmCode: 'person-detector', cameraId: rig.cameraId, targetFps: 5 })
    type Seen = { enteredArrived: Record<string, number>; cardShown: Record<string, number> }
    const objectId = await until(async () => (await page.evaluate(() => Object.keys((window as unknown as Seen).enteredArrived)))[0], 'an object.entered on the page\'s WebSocket', 180_000)
    const card = page.locator(`[data-testid="review-card"][data-object-id="${objectId}"]`)
    await card.waitFor()
    const { arrived, shown } = await page.evaluate((id) => ({ arrived: (window as unknown as Seen).enteredArrived[id]!, shown: (window as unknown as Seen).cardShown[id]! }), objectId)
    expect(shown - arrived).toBeGreaterThanOrEqual(0)
    expect(shown - arrived).toBeLessThanOrEqual(2000)

    // Names, never ids.
    expect(await card.getByTestId('review-title').textContent()).toBe('Person on office')
    // A task made after the page read its names: read again on its first event.
    await expect.poll(() => card.getByTestId('review-where').textContent()).toBe(`Task ${TASK_NAME} · in view`)
    const text = (await card.textContent())!
    expect(text).not.toContain(rig.cameraId)
    expect(text).not.toContain(TASK)
    // The snapshot: fetched with the mtk, decoded, at the size its event gives — the camera's own (768 wide) when cut from
    // the camera's frame, else the analysed frame's (512; docs/cameras-and-stream-tasks.md "Snapshots": the test's RTSP
    // server holds back the camera's own reader for seconds when the recording joins it on a loaded machine) — and
    // enlarged at that size.
    const entered = (await eventsOf(['object.entered'])).find((e: { payload: { objectId: string } }) => e.payload.objectId === objectId)
    const snapshotWidth = entered.payload.snapshotFullResolution ? CAMERA_WIDTH : ANALYSIS_WIDTH
    expect(entered.payload, JSON.stringify(entered.payload)).toMatchObject({ snapshotWidth, snapshotFallback: entered.payload.snapshotFullResolution ? null : expect.any(String) })
    const width = (selector: string) => page.locator(selector).evaluate((img: HTMLImageElement) => (img.complete ? img.naturalWidth : 0))
    await expect.poll(() => width(`[data-object-id="${objectId}"] [data-testid="review-snapshot"]`)).toBe(snapshotWidth)
    await card.getByTestId('review-snapshot-open').click()
    const enlarged = page.getByTestId('review-enlarged')
    await enlarged.waitFor()
    await expect.poll(() => width('[data-testid="review-enlarged-image"]')).toBe(snapshotWidth)
    expect(await page.getByTestId('review-enlarged-image').evaluate((img: HTMLImageElement) => img.getBoundingClientRect().width)).toBeGreaterThan(400)
    await page.keyboard.press('Escape')
    await enlarged.waitFor({ state: 'detached' })

    // It leaves: the same card says so, with the dwell of the device's object.left.
    await page.locator(`[data-object-id="${objectId}"][data-state="left"]`).waitFor({ timeout: 120_000 })
    const left = (await eventsOf(['object.left'])).find((e: { payload: { objectId: string } }) => e.payload.objectId === objectId)
    expect(await card.getByTestId('review-dwell').textContent()).toBe(`left after ${(left.payload.dwellMs / 1000).toFixed(1)} s`)
    expect(await card.locator('[data-step]').evaluateAll((steps) => steps.map((s) => s.getAttribute('data-step')))).toEqual(['entered', 'left'])
    expect(await page.locator(`[data-testid="review-card"][data-object-id="${objectId}"]`).count()).toBe(1)
    // Its clip: the event clip of the visit, attached when recording.clipReady names its object.entered; played in the page.
    await card.getByTestId('review-play').waitFor({ timeout: 90_000 })
    await card.getByTestId('review-play').click()
    await plays(page, 'review-clip')
    expect(await seriousViolations(page, 'Review (1280 px)')).toEqual([])
  })

  it('raises a toast for an alarm on another page; the card shows the policy by name; filters by policy, camera and label', { timeout: 240_000 }, async () => {
    const { page } = session
    const policy = await api('/gtw/cwai/AlarmStrage/add', { policyName: 'door watch', conditions: { taskId: TASK, label: 'person', minDwellS: 1 }, cooldownS: 0 })
    await navigate(page, 'Device')
    await ready(page, 'Device')
    const toast = page.getByTestId('alarm-toast').first()
    await toast.waitFor({ timeout: 180_000 })
    expect(await toast.getByTestId('alarm-toast-policy').textContent()).toBe('door watch')
    expect(await toast.getByTestId('alarm-toast-where').textContent()).toBe('person on office')
    const alarm = (await eventsOf(['alarm.raised']))[0]
    expect(alarm.payload).toMatchObject({ policyId: policy.policyId, policyName: 'door watch', taskId: TASK })

    await toast.getByRole('link', { name: 'Review' }).click()
    await ready(page, 'Review')
    const card = page.locator(`[data-testid="review-card"][data-object-id="${alarm.payload.objectId}"]`)
    await card.waitFor()
    expect(await card.getByTestId('review-alarm').first().textContent()).toBe('door watch')

    const count = async () => Number(await page.getByTestId('review-count').textContent())
    const cards = page.getByTestId('review-card')
    await page.getByTestId('review-policy').selectOption({ label: 'door watch' })
    await expect.poll(async () => (await cards.count()) > 0 && (await cards.count()) === (await page.locator('[data-testid="review-card"]:has([data-step="alarm"])').count())).toBe(true)
    await page.getByTestId('review-policy').selectOption('')
    const all = await count()
    await page.getByTestId('review-camera').selectOption({ label: 'office' })
    expect(await count()).toBe(all)
    await page.getByTestId('review-label').fill('car')
    await page.getByTestId('review-empty').waitFor()
    expect(await page.getByTestId('review-empty').textContent()).toBe('No object seen matches the filter.')
    await page.getByTestId('review-label').fill('person')
    await card.waitFor()
    expect(session.foreignRequests).toEqual([])
    expect(session.pageErrors).toEqual([])
  })

  it('folds the navigation into five sections behind a menu button on a phone (375 px)', { timeout: 120_000 }, async () => {
    const { page, context } = await openConsole(rig.browser, rig.device.url, 375)
    await signIn(page, rig.device.url, '#/review')
    await ready(page, 'Review')
    const nav = page.getByRole('navigation', { name: 'Main' })
    const menu = nav.getByTestId('menu-button')
    expect(await menu.isVisible()).toBe(true)
    expect(await nav.getByRole('link', { name: 'Tasks', exact: true }).isVisible()).toBe(false)
    // The folded header takes a small part of the screen, not half of it.
    const header = await page.locator('header.top').boundingBox()
    expect(header!.height).toBeLessThan(812 / 4)
    await menu.click()
    const groups = nav.getByRole('group')
    expect(await groups.evaluateAll((list) => list.map((g) => g.getAttribute('aria-label')))).toEqual(NAV_SECTIONS.map((s) => s.title))
    expect(NAV_SECTIONS).toHaveLength(5)
    // Every page is in one section, once.
    expect(NAV_SECTIONS.flatMap((s) => s.pages).sort()).toEqual(Object.keys(PAGES).sort())
    expect(await seriousViolations(page, 'Menu open (375 px)')).toEqual([])
    await nav.getByRole('link', { name: 'Tasks', exact: true }).click()
    await ready(page, 'Tasks')
    expect(await nav.getByRole('link', { name: 'Tasks', exact: true }).isVisible()).toBe(false)
    expect(await menu.getAttribute('aria-expanded')).toBe('false')
    await context.close()
  })

  it('names a task in the Tasks form; refuses a rate above the camera\'s with advice naming its rate; the name stays on a repeated create', { timeout: 180_000 }, async () => {
    const { page } = session
    await navigate(page, 'Tasks')
    await ready(page, 'Tasks')
    const before = (await api('/gtw/cwai/Task/page', { pageNum: 1, pageSize: 500 })).rows.length
    await page.getByTestId('stream-name').fill('Back office')
    await page.getByTestId('stream-task-id').fill('back-office')
    await page.getByTestId('stream-fps').fill('50')
    await page.getByTestId('stream-create').click()
    const refused = page.getByTestId('stream-task-form').getByTestId('error')
    await refused.waitFor()
    expect(await refused.getByTestId('error-key').textContent()).toBe('api.error.InvalidParam')
    expect(await refused.getByTestId('error-action-text').textContent())
      .toBe(`The camera sends ${CAMERA_FPS} frames per second: choose at most ${CAMERA_FPS} (analysing fewer, e.g. 5, saves processing).`)
    expect((await api('/gtw/cwai/Task/page', { pageNum: 1, pageSize: 500 })).rows).toHaveLength(before)

    await page.getByTestId('stream-fps').fill('1')
    await page.getByTestId('stream-create').click()
    await expect.poll(() => page.getByTestId('stream-notice').textContent(), { timeout: 120_000 }).toBe('Started task Back office.')
    const row = page.locator('[data-testid="stream-tasks"] tr[data-task-id="back-office"]')
    expect(await row.getByTestId('stream-task-name').textContent()).toBe('Back office')
    const status = (id: string) => rig.device.post('/v1/cwai/aihost/QueryTaskStatus', { taskId: id }, rig.mtk).then((r) => r.body.resData)
    expect(await status('back-office')).toMatchObject({ taskId: 'back-office', taskName: 'Back office' })
    // Sent again without a name: the same task, its name kept; a blank name is refused.
    expect(await api('/v1/cwai/aihost/TaskCreate', { taskId: 'back-office', algorithmCode: 'person-detector', cameraId: rig.cameraId, targetFps: 1 })).toEqual({ taskId: 'back-office', reused: true })
    expect((await status('back-office')).taskName).toBe('Back office')
    const blank = await rig.device.post('/v1/cwai/aihost/TaskCreate', { taskId: 'back-office', taskName: '  ', algorithmCode: 'person-detector', cameraId: rig.cameraId, targetFps: 1 }, rig.mtk)
    expect(blank.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/taskName' } })
    await api('/gtw/cwai/Task/update', { taskId: 'back-office', taskName: null })
    expect((await status('back-office')).taskName).toBeNull()
    await api('/v1/cwai/aihost/TaskCancle', { taskId: 'back-office' })
  })

  it('starts the Detection page on a detector, and a refused file leaves nothing selected', { timeout: 120_000 }, async () => {
    const { page } = session
    await navigate(page, 'Detection')
    await ready(page, 'Detection')
    await expect.poll(() => page.getByTestId('algorithm').inputValue()).toBe('object-detection')
    await page.getByTestId('file').setInputFiles(SAMPLE)
    expect(await page.getByTestId('file-name').textContent()).toBe('sample1.jpg')
    expect(await page.getByTestId('detect').isEnabled()).toBe(true)
    await page.getByTestId('file').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not a picture') })
    expect(await page.getByTestId('error-text').textContent()).toBe('notes.txt is not a JPEG, PNG or BMP image.')
    expect(await page.getByTestId('file-name').count()).toBe(0)
    expect(await page.getByTestId('detect').isDisabled()).toBe(true)
  })

  it('keeps the Logs page\'s own polling out of the info log, while other requests stay in it', { timeout: 120_000 }, async () => {
    const { page } = session
    let polls = 0
    const count = (request: { url(): string }) => { if (request.url().endsWith('/v1/cwai/aihost/QueryLogs')) polls++ }
    const since = Date.now()
    page.on('request', count)
    await navigate(page, 'Logs')
    await ready(page, 'Logs')
    // "Follow live" asks every 2 s.
    await until(async () => polls >= 4, 'four polls of the Logs page', 30_000)
    page.off('request', count)
    const query = { level: 'info', text: '/v1/cwai/aihost/QueryLogs', startTime: since, pageSize: 500 }
    await api('/v1/cwai/aihost/QueryLogs', query)
    const lines = (await api('/v1/cwai/aihost/QueryLogs', query)).rows.filter((l: { msg: string; path: string }) => l.msg === 'request' && l.path === '/v1/cwai/aihost/QueryLogs')
    // The test's own first query (no x-poll) is there; none of the page's polls is.
    expect(lines).toHaveLength(1)
  })
})
