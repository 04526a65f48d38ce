/**
 * Zones drawn on the camera's picture (docs/console-and-cli.md "Zones"), in real Chromium
 * against the real device with an RTSP camera playing the person footage: a zone drawn by
 * clicks on a capture, a point dragged, saved as the task's `taskConfig.regions` (read back
 * through the API at the coordinates of the clicks), then an alarm policy chooses it from the
 * list of the task's zones (docs/alarms-and-schedules.md "Alarm policies").
 */
import { expect } from 'vitest'
import type { Page } from 'playwright-core'
import { seriousViolations } from '../helpers/axe.ts'
import { browserTest as test, navigate, openConsole, ready, signIn, type ConsolePage } from '../helpers/browser.ts'
import { footageApi, type FootageApi } from '../helpers/cameras.ts'
import { until } from '../helpers/processes.ts'
import { PERSON_VIDEO } from '../helpers/video.ts'

const TASK = 'zones'
/** The corners clicked, as fractions of the picture; then corner 2 is dragged to DRAGGED_TO. */
const CLICKS = [[0.1, 0.2], [0.45, 0.15], [0.5, 0.8], [0.12, 0.85]] as const
const DRAGGED = 2
const DRAGGED_TO = [0.62, 0.9] as const
/** x0, x1, y0, y1 as fractions of the picture. */
type Rect = [number, number, number, number]
/**
 * Where the people in the footage stand, at the table in the middle: their box centres are
 * within x 0.3–0.85 (test/console/alarm-from-console.browser.test.ts, read from its frames).
 * Away from them: the top left corner of the picture, the wall above the floor, where no
 * standing person's box centre can be.
 */
const PATH: Rect = [0.3, 0.85, 0, 1]
const AWAY: Rect = [0, 0.2, 0, 0.25]

/** The page pixel at a fraction of the picture (whole pixels, as a mouse has them), and the fraction that pixel is. */
const pixel = (box: { x: number; y: number; width: number; height: number }, [fx, fy]: readonly [number, number]) => {
  const x = Math.round(box.x + fx * box.width), y = Math.round(box.y + fy * box.height)
  return { x, y, ratio: { xRatio: (x - box.x) / box.width, yRatio: (y - box.y) / box.height } }
}

test.describe('console: zones drawn on the camera\'s picture, chosen by a policy', () => {
  let api: FootageApi
  let session: ConsolePage
  test.afterAll(async () => {
    await api?.stopCameras()
  })

  test('a zone drawn by clicks, a point dragged, saved as the task\'s region; the policy form lists it', { timeout: 240_000 }, async ({ device, mtk, browser }) => {
    api = footageApi(device, mtk, PERSON_VIDEO)
    const cameraId = await api.addCamera('office')
    await api.ok('/v1/cwai/aihost/TaskCreate', { taskId: TASK, taskName: 'Office people', algorithmCode: 'person-detector', cameraId, targetFps: 1 })
    session = await openConsole(browser, device.url, 1280)
    const { page } = session
    await signIn(page, device.url, '#/tasks')
    await ready(page, 'Tasks')
    await page.getByRole('button', { name: 'Details of Office people' }).click()
    const canvas = page.getByTestId('zone-canvas')
    await canvas.waitFor()
    const capture = await api.ok('/gtw/cwai/Camera/capture', { cameraId })
    expect(await canvas.getAttribute('viewBox')).toBe(`0 0 ${capture.width} ${capture.height}`)
    await canvas.scrollIntoViewIfNeeded()
    const box = (await canvas.boundingBox())!

    await page.getByTestId('zone-draw').click()
    const clicked = []
    for (const corner of CLICKS) {
      const at = pixel(box, corner)
      await page.mouse.click(at.x, at.y)
      clicked.push(at.ratio)
    }
    expect(await page.getByTestId('zone-hint').textContent()).toContain('4 so far')
    await page.getByTestId('zone-finish').click()
    // The dragged point: from its drawn place to DRAGGED_TO, in steps as a hand moves.
    const from = pixel(box, CLICKS[DRAGGED]), to = pixel(box, DRAGGED_TO)
    await page.mouse.move(from.x, from.y)
    await page.mouse.down()
    await page.mouse.move(to.x, to.y, { steps: 8 })
    await page.mouse.up()
    const expected = clicked.map((p, i) => (i === DRAGGED ? to.ratio : p))
    // Named after the drag: typing scrolls the fields below the picture into view.
    const fields = page.getByTestId('zone-fields')
    expect(await fields.count()).toBe(1)
    await fields.getByTestId('zone-id').fill('door')
    await fields.getByTestId('zone-name').fill('Door')
    // The point list shows the same points, x and y of each (keyboard editing).
    const typed = await fields.locator('input[type="number"]').evaluateAll((inputs) => inputs.map((i) => Number((i as HTMLInputElement).value)))
    expect(typed).toHaveLength(8)
    expect(await seriousViolations(page, 'zones')).toEqual([])

    await page.getByTestId('zones-save').click()
    await expect.poll(() => page.getByTestId('zones-notice').textContent(), { timeout: 120_000 }).toBe('Saved 1 zone: door.')
    const task = await api.ok('/gtw/cwai/Task/detail', { taskId: TASK })
    const [region, ...others] = task.taskConfig.regions
    expect(others).toEqual([])
    expect(region.areaId).toBe('door')
    expect(region.areaName).toBe('Door')
    expect(region.polygon).toHaveLength(CLICKS.length)
    // Within a pixel of the clicks (the browser may place a mouse event on a sub-pixel) and rounded to 4 decimals.
    region.polygon.forEach((p: { xRatio: number; yRatio: number }, i: number) => {
      expect(Math.abs(p.xRatio - expected[i]!.xRatio), `point ${i} x`).toBeLessThanOrEqual(1 / box.width + 5e-5)
      expect(Math.abs(p.yRatio - expected[i]!.yRatio), `point ${i} y`).toBeLessThanOrEqual(1 / box.height + 5e-5)
      expect(typed[2 * i], `point ${i} x in the list`).toBe(p.xRatio)
      expect(typed[2 * i + 1], `point ${i} y in the list`).toBe(p.yRatio)
    })
    expect(await page.locator('[data-testid="zone-canvas"] g[data-area-id="door"] polygon').count()).toBe(1)
    await session.screenshot('zones')
    // On a phone the picture and the point list fit the screen, and stay accessible.
    await page.setViewportSize({ width: 375, height: 812 })
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)
    expect(await seriousViolations(page, 'zones (375 px)')).toEqual([])
    await page.screenshot({ path: 'test/artifacts/zones-375.png', fullPage: true })
    await page.setViewportSize({ width: 1280, height: 900 })

    await choosePolicyZone(page, cameraId)
    expect(session.pageErrors).toEqual([])
    expect(session.foreignRequests).toEqual([])
  })

  test('zones typed from the keyboard restrict policies: an alarm for the zone on the people\'s path, none for the zone away from it', { timeout: 300_000 }, async () => {
    const { page } = session
    await navigate(page, 'Tasks')
    await ready(page, 'Tasks')
    await page.getByRole('button', { name: 'Details of Office people' }).click()
    await page.getByTestId('zone-canvas').waitFor()
    const fields = page.getByTestId('zone-fields')
    /** A rectangle added, renamed, and its four corners typed (x, y each, committed by Tab). */
    const rectangle = async (areaId: string, [x0, x1, y0, y1]: Rect) => {
      await page.getByTestId('zone-add-rectangle').click()
      const zone = fields.last()
      await zone.getByTestId('zone-id').fill(areaId)
      const corners = [x0, y0, x1, y0, x1, y1, x0, y1]
      for (const [i, v] of corners.entries()) {
        const input = zone.locator('input[type="number"]').nth(i)
        await input.fill(String(v))
        await input.press('Tab')
      }
    }
    await rectangle('path', PATH)
    await rectangle('away', AWAY)
    await page.getByTestId('zones-save').click()
    await expect.poll(() => page.getByTestId('zones-notice').textContent(), { timeout: 120_000 }).toBe('Saved 3 zones: door, path, away.')
    const regions = (await api.ok('/gtw/cwai/Task/detail', { taskId: TASK })).taskConfig.regions
    const rect = ([x0, x1, y0, y1]: Rect) => [{ xRatio: x0, yRatio: y0 }, { xRatio: x1, yRatio: y0 }, { xRatio: x1, yRatio: y1 }, { xRatio: x0, yRatio: y1 }]
    expect(regions.slice(1)).toEqual([{ areaId: 'path', polygon: rect(PATH) }, { areaId: 'away', polygon: rect(AWAY) }])

    const since = Date.now()
    for (const areaId of ['path', 'away'])
      await api.ok('/gtw/cwai/AlarmStrage/add', { policyName: `person in ${areaId}`, conditions: { taskId: TASK, areaId, label: 'person', minDwellS: 1 }, cooldownS: 600 })
    const events = async (kinds: string[]) => (await api.ok('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 500, kinds, taskId: TASK })).rows
      .filter((e: any) => Date.parse(e.time) >= since)
    // A whole visit after the policies: a person entered and left, with the path's alarm between.
    const visit = await until(async () => {
      const alarms = (await events(['alarm.raised'])).filter((e: any) => e.payload.policyName === 'person in path')
      const left = (await events(['object.left'])).filter((e: any) => alarms.some((a: any) => a.payload.objectIds.includes(e.payload.objectId)))
      return left.length > 0 && { alarms, left }
    }, 'a person to raise the path\'s alarm and leave', 240_000)
    expect(visit.alarms[0].payload).toMatchObject({ alarmType: 'policy', taskId: TASK, areaId: 'path', label: 'person' })
    const all = await events(['alarm.raised'])
    expect(all.filter((e: any) => e.payload.policyName === 'person in away')).toEqual([])

    // A motion mask is drawn the same way and saved beside the zones (taskConfig.motionMasks).
    await page.getByTestId('edit-masks').check()
    expect(await page.getByTestId('zone-fields').count()).toBe(0)
    await page.getByTestId('zone-add-rectangle').click()
    await page.getByTestId('zone-fields').getByTestId('zone-id').fill('clock')
    await page.getByTestId('zones-save').click()
    await expect.poll(() => page.getByTestId('zones-notice').textContent(), { timeout: 120_000 }).toBe('Saved 3 zones: door, path, away. 1 motion mask: clock.')
    const config = (await api.ok('/gtw/cwai/Task/detail', { taskId: TASK })).taskConfig
    expect(config.motionMasks).toEqual([{ areaId: 'clock', polygon: rect([0.25, 0.75, 0.25, 0.75]) }])
    expect(config.regions.map((r: { areaId: string }) => r.areaId)).toEqual(['door', 'path', 'away'])
    await page.getByTestId('edit-zones').check()
    expect(await page.getByTestId('zone-fields').count()).toBe(3)
    await expect.poll(async () => (await api.status(TASK)).state, { timeout: 60_000 }).toBe('running')
  })

  /** The policy form offers the task's zone, none typed; the policy stores it. */
  async function choosePolicyZone(page: Page, cameraId: string) {
    await navigate(page, 'Alarm policies')
    await ready(page, 'Alarm policies')
    await page.getByTestId('policy-new').click()
    await page.getByTestId('policy-policyName').fill('at the door')
    await page.getByTestId('policy-scope').selectOption(`task:${TASK}`)
    const zone = page.getByTestId('policy-areaId')
    expect(await zone.evaluate((s: HTMLSelectElement) => [...s.options].map((o) => [o.value, o.textContent]))).toEqual([['', 'Anywhere in the picture'], ['door', 'Door (door)']])
    await zone.selectOption('door')
    await page.getByTestId('policy-save').click()
    await expect.poll(() => page.getByTestId('policies-notice').textContent()).toBe('Added the policy at the door.')
    const [policy] = (await api.ok('/gtw/cwai/AlarmStrage/page', {})).rows
    expect(policy.conditions).toEqual({ taskId: TASK, areaId: 'door', label: 'person', minCount: 1, minDwellS: 0 })
    // A camera scope lists its tasks' zones.
    await page.getByTestId('policy-new').click()
    await page.getByTestId('policy-scope').selectOption(`camera:${cameraId}`)
    expect(await zone.evaluate((s: HTMLSelectElement) => [...s.options].map((o) => o.value))).toEqual(['', 'door'])
    expect(await seriousViolations(page, 'policy zones')).toEqual([])
  }
})
