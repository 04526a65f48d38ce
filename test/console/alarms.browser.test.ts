/**
 * The console's Schedules, Alarm policies and Events pages (spec 4.10 Schedule, Linkage / alarm
 * policy, Event; README "Schedules", "Alarm policies") in real Chromium against the real device,
 * ffmpeg and GStreamer's RTSP server on loopback playing the person footage: a schedule edit
 * takes effect on the task that uses it, a policy is made and switched in its editor, and its
 * alarms appear on the events timeline with their snapshots. Every screen passes axe-core.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { seriousViolations } from '../helpers/axe.ts'
import { openConsole, ready, signIn, type ConsolePage } from '../helpers/browser.ts'
import { startCameraConsole, type CameraConsole } from '../helpers/camera-console.ts'
import { PERSON_VIDEO, videoFacts } from '../helpers/video.ts'
import { until } from '../helpers/processes.ts'

let rig: CameraConsole
const api = (route: string, body: unknown) => rig.api(route, body)
const taskStatus = () => api('/v1/cwai/aihost/QueryTaskStatus', { taskId: 'shop-door' })

beforeAll(async () => {
  rig = await startCameraConsole({}, 'shop')
})
afterAll(async () => {
  await rig?.stop()
})

const scheduleRow = (page: Page, name: string) => page.locator('[data-testid="schedules"] tbody tr').filter({ has: page.locator('th', { hasText: name }) })

describe('console: schedules, alarm policies and the event history', () => {
  let session: ConsolePage

  it('a schedule edit takes effect: the task idles outside its schedule and analyses once the edit covers now', { timeout: 240_000 }, async () => {
    session = await openConsole(rig.browser, rig.device.url, 1280)
    const { page } = session
    await signIn(page, rig.device.url, '#/schedules')
    await ready(page, 'Schedules')
    await page.getByTestId('schedule-new').click()
    await page.getByTestId('schedule-name').fill('shop hours')
    // No windows at all: never on.
    await page.getByRole('button', { name: 'Remove window 1' }).click()
    await page.getByTestId('schedule-save').click()
    await expect.poll(() => page.getByTestId('schedules-notice').textContent()).toBe('Added the schedule shop hours.')
    await expect.poll(() => scheduleRow(page, 'shop hours').getByTestId('schedule-state').textContent()).toBe('Off')
    const [schedule] = (await api('/gtw/cwai/schedule/page', { scheduleName: 'shop hours' })).rows
    expect(schedule).toMatchObject({ windows: [], active: false, nextChange: null })

    await api('/v1/cwai/aihost/TaskCreate', { taskId: 'shop-door', algorithmCode: 'person-detector', cameraId: rig.cameraId, targetFps: 2, scheduleId: schedule.scheduleId })
    const idle = await until(async () => { const s = await taskStatus(); return s.state === 'idle' && s.scheduleSkipped > 2 && s }, 'the task to idle', 60_000)
    expect(idle).toMatchObject({ stateReason: 'outsideSchedule: "shop hours" until never', detectorLatencyP50Ms: null })

    // The edit: every day, all day.
    await scheduleRow(page, 'shop hours').getByRole('button', { name: 'Edit shop hours' }).click()
    await page.getByTestId('window-add').click()
    await page.getByTestId('window-day').selectOption('every')
    await page.getByTestId('window-start').fill('00:00')
    await page.getByTestId('window-end').fill('24:00')
    await page.getByTestId('schedule-save').click()
    await expect.poll(() => page.getByTestId('schedules-notice').textContent()).toBe('Saved the schedule shop hours.')
    await expect.poll(() => scheduleRow(page, 'shop hours').getByTestId('schedule-state').textContent(), { timeout: 10_000 }).toBe('On')
    const running = await until(async () => { const s = await taskStatus(); return s.state === 'running' && s.detectorLatencyP50Ms !== null && s }, 'the task to analyse', 60_000)
    expect(running).toMatchObject({ stateReason: null, scheduleId: schedule.scheduleId })
    expect((await api('/gtw/cwai/schedule/query', { scheduleId: schedule.scheduleId })).windows).toHaveLength(7)
    expect(await scheduleRow(page, 'shop hours').textContent()).toContain('task shop-door')
    const found = await seriousViolations(page, 'Schedules (1280 px)')
    expect(found).toEqual([])
  })

  it('the policy editor makes a policy on the task with the schedule, and its switch turns it off and on', { timeout: 120_000 }, async () => {
    const { page } = session
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Alarm policies', exact: true }).click()
    await ready(page, 'Alarm policies')
    await page.getByTestId('policy-new').click()
    await page.getByTestId('policy-policyName').fill('person at the door')
    await page.getByTestId('policy-scope').selectOption('task:shop-door')
    await page.getByTestId('policy-label').fill('person')
    await page.getByTestId('policy-minDwellS').fill('3')
    await page.getByTestId('policy-schedule').selectOption({ label: 'shop hours' })
    await page.getByTestId('policy-mqttTopic').fill('shop/alarms')
    // "A stranger seen" on a task that recognizes no faces: the device's refusal is shown, nothing is saved.
    await page.getByTestId('policy-seen').selectOption('stranger')
    await page.getByTestId('policy-save').click()
    expect(await page.getByTestId('policy-form').getByTestId('error-key').textContent()).toBe('api.error.AlarmConditionUnavailable')
    expect((await api('/gtw/cwai/AlarmStrage/page', {})).rows).toEqual([])
    await page.getByTestId('policy-seen').selectOption('')
    await page.getByTestId('policy-save').click()
    await expect.poll(() => page.getByTestId('policies-notice').textContent()).toBe('Added the policy person at the door.')
    const [policy] = (await api('/gtw/cwai/AlarmStrage/page', {})).rows
    expect(policy).toMatchObject({
      policyName: 'person at the door', enabled: true, cooldownS: 60, conditions: { taskId: 'shop-door', label: 'person', minDwellS: 3, minCount: 1 },
      actions: [{ type: 'mqtt', topic: 'shop/alarms' }],
    })
    expect((await api('/gtw/cwai/schedule/page', {})).rows[0].users.policies).toEqual([{ policyId: policy.policyId, policyName: 'person at the door' }])
    const toggle = page.getByRole('checkbox', { name: 'person at the door switched on' })
    await toggle.uncheck()
    await expect.poll(async () => (await api('/gtw/cwai/AlarmStrage/detail', { policyId: policy.policyId })).enabled).toBe(false)
    await toggle.check()
    await expect.poll(async () => (await api('/gtw/cwai/AlarmStrage/detail', { policyId: policy.policyId })).enabled).toBe(true)
    expect(await seriousViolations(page, 'Alarm policies (1280 px)')).toEqual([])
  })

  it('the events page shows the alarms on a timeline with their snapshots, filtered by label', { timeout: 240_000 }, async () => {
    const { page } = session
    // A visit of the footage lasts well over 3 s: the policy raises an alarm for it.
    const alarm = await until(async () => (await api('/gtw/cwai/Event/EventPage', { kinds: ['alarm.raised'], taskId: 'shop-door' })).rows[0], 'an alarm', 180_000)
    expect(alarm).toMatchObject({ payload: { policyName: 'person at the door', label: 'person' }, thumbnailUrl: alarm.payload.snapshotUrl, clipUrl: null })
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Events', exact: true }).click()
    await ready(page, 'Events')
    const item = page.locator(`[data-event-id="${alarm.id}"]`)
    await item.waitFor()
    expect(await item.getByTestId('event-text').textContent()).toMatch(/^person at the door: person for \d+ s$/)
    // The snapshot was fetched with the mtk and decoded, at the size the alarm gives: the camera's own (the footage's width)
    // when cut from the camera's frame, else the analysed frame's, 512 (docs/cameras-and-stream-tasks.md "Snapshots").
    const shown = alarm.payload.snapshotFullResolution ? videoFacts(PERSON_VIDEO).width : 512
    expect(alarm.payload, JSON.stringify(alarm.payload)).toMatchObject({ snapshotWidth: shown, snapshotFallback: alarm.payload.snapshotFullResolution ? null : expect.any(String) })
    await expect.poll(() => item.getByTestId('event-thumbnail').evaluate((img: HTMLImageElement) => img.complete ? img.naturalWidth : 0)).toBe(shown)
    await page.getByTestId('filter-label').fill('car')
    await page.getByTestId('filter-apply').click()
    await page.getByTestId('no-events').waitFor()
    await page.getByTestId('filter-label').fill('person')
    await page.getByTestId('filter-task').selectOption('shop-door')
    await page.getByTestId('filter-apply').click()
    await item.waitFor()
    expect(await seriousViolations(page, 'Events (1280 px)')).toEqual([])
    expect(session.foreignRequests).toEqual([])
    expect(session.pageErrors).toEqual([])
  })
})
