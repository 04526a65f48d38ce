/**
 * The Recordings page as an operator's review desk (docs/console-and-cli.md "Recordings") in real
 * Chromium against the real device, ffmpeg and GStreamer's RTSP server on loopback playing the
 * person footage: a day's clips on a camera's timeline with the events as markers, a marker
 * playing from its pre-roll before the event, the bar scrubbed by pointer and by keyboard, and
 * the seconds before and after stated as the settings made them, on the Recordings page and in
 * the alarm policy's form.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { seriousViolations } from '../helpers/axe.ts'
import { navigate, openConsole, ready, signIn, type ConsolePage } from '../helpers/browser.ts'
import { startCameraConsole, type CameraConsole } from '../helpers/camera-console.ts'
import { until } from '../helpers/processes.ts'

const TASK = 'timeline-door'
const TASK_NAME = 'Office people'
const POLICY = 'Someone at the table'
/** The camera's rolls and the policy clip action's: no 5 anywhere, so a fixed "5 s" text cannot pass. */
const CAMERA_ROLLS = { preRollSeconds: 4, postRollSeconds: 3 }
const POLICY_ROLLS = { preRollS: 6, postRollS: 7 }
/**
 * Chromium seeks a <video> to the exact time asked (it decodes from the key frame before it),
 * so the position read at its `seeked` differs from the one asked by the time played since
 * (read at once: under 0.3 s) and a frame (0.1 s at the footage's 10 fps): 0.5 s covers both.
 */
const SEEK_TOLERANCE_S = 0.5

let rig: CameraConsole
const api = (route: string, body: unknown) => rig.api(route, body)

beforeAll(async () => {
  rig = await startCameraConsole({ RECORD_SEGMENT_SECONDS: '2', RECORD_CHECK_INTERVAL_MS: '500' }, 'office')
})
afterAll(async () => {
  await rig?.stop()
})

/** The video's position at its first `seeked` (at once when it already seeked), and the clip it plays. */
const seekedAt = (page: Page) => page.getByTestId('timeline-video').evaluate((v: HTMLVideoElement) => new Promise<{ time: number; clipId: string; offset: number }>((resolve) => {
  const done = () => resolve({ time: v.currentTime, clipId: v.dataset.clip!, offset: Number(v.dataset.offset) })
  if (v.readyState >= 1 && !v.seeking && Math.abs(v.currentTime - Number(v.dataset.offset)) < 1) done()
  else v.addEventListener('seeked', done, { once: true })
}))

describe('console: the recordings timeline', () => {
  let session: ConsolePage
  let clips: any[]
  let events: any[]
  let merged: any

  it('records a person\'s visit with an alarm as one clip (the footage, a policy with a clip action)', { timeout: 300_000 }, async () => {
    await api('/gtw/cwai/System/SetRecordParam', { cameras: [{ cameraId: rig.cameraId, mode: 'events', ...CAMERA_ROLLS }] })
    await until(async () => (await api('/gtw/cwai/System/QueryRecordParam', {})).cameras[0].state === 'recording', 'recording to run', 30_000)
    const since = Date.now()
    await api('/v1/cwai/aihost/TaskCreate', { taskId: TASK, taskName: TASK_NAME, algorithmCode: 'person-detector', cameraId: rig.cameraId, targetFps: 5 })
    await api('/gtw/cwai/AlarmStrage/add', { policyName: POLICY, conditions: { cameraId: rig.cameraId, label: 'person', minDwellS: 2 }, cooldownS: 0, actions: [{ type: 'clip', ...POLICY_ROLLS }] })
    // A clip of a visit that began once the ring held the policy's pre-roll, with an alarm in it.
    merged = await until(async () => {
      const page = await api('/gtw/cwai/System/RecordClipPage', { cameraId: rig.cameraId, pageSize: 500 })
      return page.rows.find((c: any) => c.startTime > since && c.events.some((e: any) => e.eventKind === 'alarm.raised') && c.events.some((e: any) => e.eventKind === 'object.entered'))
    }, 'a visit\'s clip with its alarm', 240_000)
    // The task stops reading (it stays, with its name).
    await api('/gtw/cwai/Task/switch', { taskId: TASK, enabled: false })
    // Until nothing more is written (a visit cut by the cancel is written after its post-roll).
    let last = -1
    await until(async () => {
      const total = (await api('/gtw/cwai/System/RecordClipPage', { cameraId: rig.cameraId })).total
      const still = total === last
      last = total
      await new Promise((resolve) => setTimeout(resolve, 4000))
      return still
    }, 'recording of clips to settle', 60_000)
    const day = new Date()
    const from = new Date(day.getFullYear(), day.getMonth(), day.getDate()).getTime()
    clips = (await api('/gtw/cwai/System/RecordClipPage', { cameraId: rig.cameraId, from, to: from + 86_400_000, pageSize: 500 })).rows
    events = (await api('/gtw/cwai/Event/EventPage', { cameraId: rig.cameraId, kinds: ['object.entered', 'alarm.raised'], startTime: new Date(from).toISOString(), pageSize: 500 })).rows
    expect(clips.map((c) => c.clipId)).toContain(merged.clipId)
    // One clip per object: no two event clips of one object.
    const objects = clips.filter((c) => c.kind === 'event').map((c) => `${c.taskId}/${c.objectId}`)
    expect(new Set(objects).size).toBe(objects.length)
  })

  it('states the seconds before and after that apply: the camera\'s, and the policy clip action\'s', { timeout: 60_000 }, async () => {
    session = await openConsole(rig.browser, rig.device.url, 1280)
    const { page } = session
    await signIn(page, rig.device.url, '#/recordings')
    await ready(page, 'Recordings')
    const rolls = page.getByTestId('record-rolls')
    await expect.poll(() => rolls.textContent()).toContain(`“${POLICY}”`)
    const text = (await rolls.textContent())!.replace(/\s+/g, ' ')
    expect(text).toContain(`from ${CAMERA_ROLLS.preRollSeconds} s before it entered to ${CAMERA_ROLLS.postRollSeconds} s after it left`)
    expect(text).toContain(`an alarm without a clip action: ${CAMERA_ROLLS.preRollSeconds} s before, ${CAMERA_ROLLS.postRollSeconds} s after`)
    expect(text).toContain(`alarms of “${POLICY}”: ${POLICY_ROLLS.preRollS} s before, ${POLICY_ROLLS.postRollS} s after (its clip action)`)
    expect(await page.locator('main').textContent()).not.toMatch(/\b5 s\b/)

    await navigate(page, 'Alarm policies')
    await ready(page, 'Alarm policies')
    await page.getByRole('button', { name: `Edit ${POLICY}` }).click()
    const hint = page.getByTestId('policy-clip-rolls')
    await expect.poll(() => hint.textContent()).toContain('office records')
    const policyText = (await hint.textContent())!.replace(/\s+/g, ' ')
    expect(policyText).toContain(`Each alarm's clip: ${POLICY_ROLLS.preRollS} s before and ${POLICY_ROLLS.postRollS} s after the alarm (this policy's).`)
    expect(policyText).toContain(`office records its own clips ${CAMERA_ROLLS.preRollSeconds} s before and ${CAMERA_ROLLS.postRollSeconds} s after`)
    // Without the action, the camera's.
    await page.getByTestId('policy-clip').uncheck()
    await expect.poll(async () => (await hint.textContent())!.replace(/\s+/g, ' ')).toBe(`Without "Record a clip", an alarm gets the camera's clip: office records its own clips ${CAMERA_ROLLS.preRollSeconds} s before and ${CAMERA_ROLLS.postRollSeconds} s after.`)
    expect(await page.locator('main').textContent()).not.toMatch(/\b5 s\b/)
  })

  it('draws the day\'s clips and events on the camera\'s bar, by name; a marker plays its clip from the pre-roll before the event', { timeout: 90_000 }, async () => {
    const { page } = session
    await navigate(page, 'Recordings')
    await ready(page, 'Recordings')
    // The bar shows what the API answers for the camera and day (read again after each refresh of the page: a clip cut by the task's end may still be written).
    const day = new Date()
    const midnight = new Date(day.getFullYear(), day.getMonth(), day.getDate()).getTime()
    const shownIds = (testId: string, key: string) => page.getByTestId(testId).evaluateAll((all, k) => all.map((e) => (e as HTMLElement).dataset[k]!).sort(), key)
    await until(async () => {
      await page.getByRole('button', { name: 'Refresh timeline' }).click()
      await page.waitForTimeout(1000)
      clips = (await api('/gtw/cwai/System/RecordClipPage', { cameraId: rig.cameraId, from: midnight, to: midnight + 86_400_000, pageSize: 500 })).rows
      events = (await api('/gtw/cwai/Event/EventPage', { cameraId: rig.cameraId, kinds: ['object.entered', 'alarm.raised'], startTime: new Date(midnight).toISOString(), pageSize: 500 })).rows
      const [onBar, marked] = [await shownIds('timeline-clip', 'clip'), await shownIds('timeline-marker', 'event')]
      return JSON.stringify(onBar) === JSON.stringify(clips.map((c) => c.clipId).sort()) && JSON.stringify(marked) === JSON.stringify(events.map((e) => String(e.id)).sort())
    }, 'the bar to show the API\'s clips and events', 45_000)
    expect(clips.length).toBeGreaterThanOrEqual(1)
    expect(events.length).toBeGreaterThanOrEqual(2)
    expect(await page.getByTestId('timeline-camera').locator('option:checked').textContent()).toBe('office')

    // The alarm of the merged clip: named by its policy and task, never by ids.
    const alarmId = merged.events.find((e: any) => e.eventKind === 'alarm.raised').eventId
    const alarm = events.find((e) => e.id === alarmId)
    const marker = page.locator(`[data-testid="timeline-marker"][data-event="${alarmId}"]`)
    const label = (await marker.getAttribute('aria-label'))!
    expect(label).toContain(`Alarm ${POLICY}`)
    expect(label).toContain(TASK_NAME)
    expect(label).not.toContain(rig.cameraId)
    expect(label).not.toContain(alarm.payload.policyId)
    await marker.click()
    const shown = await seekedAt(page)
    expect(shown.clipId).toBe(merged.clipId)
    const expected = (Date.parse(alarm.time) - POLICY_ROLLS.preRollS * 1000 - merged.startTime) / 1000
    expect(shown.offset).toBeCloseTo(expected, 3)
    expect(shown.time).toBeGreaterThanOrEqual(expected - 0.1)
    expect(shown.time).toBeLessThanOrEqual(expected + SEEK_TOLERANCE_S)

    // The entry marker of the same clip: the camera's pre-roll before the entry.
    const enteredId = merged.events.find((e: any) => e.eventKind === 'object.entered').eventId
    const entered = events.find((e) => e.id === enteredId)
    await page.locator(`[data-testid="timeline-marker"][data-event="${enteredId}"]`).click()
    const fromEntry = (Date.parse(entered.time) - CAMERA_ROLLS.preRollSeconds * 1000 - merged.startTime) / 1000
    await expect.poll(() => page.getByTestId('timeline-video').evaluate((v: HTMLVideoElement) => Number(v.dataset.offset))).toBeCloseTo(Math.max(0, fromEntry), 3)
    const again = await seekedAt(page)
    expect(again.time).toBeGreaterThanOrEqual(Math.max(0, fromEntry) - 0.1)
    expect(again.time).toBeLessThanOrEqual(Math.max(0, fromEntry) + SEEK_TOLERANCE_S)
    expect(await seriousViolations(page, 'Recordings with a timeline')).toEqual([])
  })

  it('scrubs: a click on the bar plays the clip covering that time from there; the keyboard moves and plays too', { timeout: 60_000 }, async () => {
    const { page } = session
    const bar = page.getByTestId('timeline-bar')
    const from = Number(await bar.getAttribute('data-from')), to = Number(await bar.getAttribute('data-to'))
    const box = (await bar.boundingBox())!
    // The middle of the merged clip.
    const target = (merged.startTime + merged.endTime) / 2
    await page.mouse.click(box.x + ((target - from) / (to - from)) * box.width, box.y + box.height / 2)
    const shown = await seekedAt(page)
    expect(shown.clipId).toBe(merged.clipId)
    // One pixel of the bar is (to − from) / width ms.
    const pixelS = (to - from) / box.width / 1000
    expect(Math.abs(shown.offset - (target - merged.startTime) / 1000)).toBeLessThanOrEqual(pixelS)
    expect(shown.time - shown.offset).toBeGreaterThanOrEqual(-0.1)
    expect(shown.time - shown.offset).toBeLessThanOrEqual(SEEK_TOLERANCE_S)

    // Keyboard: Home, then → steps of 10 s up to the clip's start, Enter plays.
    await bar.focus()
    await page.keyboard.press('Home')
    expect(Number(await bar.getAttribute('aria-valuenow'))).toBe(Math.round(from / 1000))
    const steps = Math.ceil((merged.startTime - from) / 10_000)
    for (let i = 0; i < steps; i++) await page.keyboard.press('ArrowRight')
    expect(Number(await bar.getAttribute('aria-valuenow'))).toBe(Math.round(Math.min(to, from + steps * 10_000) / 1000))
    const chosen = from + steps * 10_000
    const before = await page.getByTestId('timeline-video').getAttribute('data-offset')
    await page.keyboard.press('Enter')
    await expect.poll(() => page.getByTestId('timeline-video').getAttribute('data-offset')).not.toBe(before)
    // The clip covering the chosen time, from there.
    const video = page.getByTestId('timeline-video')
    const playingId = await video.getAttribute('data-clip')
    const clip = clips.find((c) => c.clipId === playingId)
    expect(clip.startTime).toBeLessThanOrEqual(chosen)
    expect(clip.endTime).toBeGreaterThan(chosen)
    expect(Number(await video.getAttribute('data-offset'))).toBeCloseTo((chosen - clip.startTime) / 1000, 3)
    expect(session.pageErrors).toEqual([])
  })
})
