/**
 * Every screen of the console, checked by axe-core in real Chromium against the real device:
 * no violation of impact serious or critical, on a desktop and on a phone (375 px).
 */
import path from 'node:path'
import { expect } from 'vitest'
import type { Page } from 'playwright-core'
import { seriousViolations as serious } from '../helpers/axe.ts'
import { browserTest as test, navigate, openConsole } from '../helpers/browser.ts'
import { CHANGED_PASSWORD, INITIAL_PASSWORD, type DeviceProcess } from '../helpers/device.ts'
import { PAGES } from '../../runtime/console/pages.ts'

const SAMPLE = path.resolve('node_modules/@vladmandic/face-api/demo/sample1.jpg')
/** Pages whose table must be shown when checked (the narrow layout turns tables into cards). */
const TABLES: Partial<Record<keyof typeof PAGES, string>> = { tasks: 'tasks', algorithms: 'algorithms', models: 'models', galleries: 'gallery-items' }

/** A task made outside the console, so the Tasks page has a table to check (after the password change, spec 5.7). */
async function ensureTask(device: DeviceProcess) {
  const mtk = await device.adminToken()
  const tasks = await device.post('/v1/cwai/aihost/QueryTaskList', {}, mtk)
  if ((tasks.body.resData.rows as { taskId: string }[]).some((t) => t.taskId === 'axe-task')) return
  const created = await device.post('/v1/cwai/aihost/PTaskCreate', { taskId: 'axe-task', algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) }, mtk)
  expect(created.body.resCode).toBe(1)
  // …and a face gallery with a person, so the Galleries page shows its lists.
  expect((await device.post('/gtw/cwai/Library/AddLibrary', { galleryId: 'axe', name: 'Axe' }, mtk)).body.resCode).toBe(1)
  expect((await device.post('/gtw/cwai/Library/AddPerson', { galleryId: 'axe', personId: 'p', name: 'Pat' }, mtk)).body.resCode).toBe(1)
}

/** The screen's heading is shown and nothing in it is still loading. */
async function ready(page: Page, heading: string) {
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
  await page.waitForFunction(() => !document.querySelector('main')?.textContent?.includes('Loading…'))
}

/** Visits every page by its nav link and checks it. */
async function everyPage(page: Page, width: number): Promise<string[]> {
  const found: string[] = []
  for (const [key, heading] of Object.entries(PAGES)) {
    await navigate(page, heading)
    await ready(page, heading)
    expect(page.url()).toContain(`#/${key}`)
    const table = TABLES[key as keyof typeof PAGES]
    if (table) await page.getByTestId(table).waitFor()
    found.push(...await serious(page, `${heading} (${width} px)`))
  }
  return found
}

/** A detection result: the picture, the targets table and the raw JSON. */
async function detectionResult(page: Page, width: number): Promise<string[]> {
  await navigate(page, 'Detection')
  await ready(page, 'Detection')
  await page.getByTestId('algorithm').selectOption('face-detection')
  await page.getByTestId('file').setInputFiles(SAMPLE)
  await page.getByTestId('detect').click()
  await page.getByTestId('targets').waitFor({ timeout: 120_000 })
  return serious(page, `Detection result (${width} px)`)
}

test.describe('console: accessibility (axe-core)', () => {
  test('has no serious violation on the sign-in and password screens, on any page, or on a detection result (1440 px)', { timeout: 300_000 }, async ({ device, browser }) => {
    const { page, pageErrors, context } = await openConsole(browser, device.url, 1440)
    const found: string[] = []
    await page.goto(device.url + '/console/')
    await ready(page, 'Sign in')
    found.push(...await serious(page, 'Sign in'))
    // A shown error is part of the screen too.
    await page.getByLabel('Password').fill('wrong-password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByTestId('error').waitFor()
    found.push(...await serious(page, 'Sign in, error'))

    // The forced password change (spec 5.7), checked before it is done.
    await page.getByLabel('Password').fill(INITIAL_PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await ready(page, 'Change password')
    found.push(...await serious(page, 'Change password'))
    await page.getByLabel('New password', { exact: true }).fill(CHANGED_PASSWORD)
    await page.getByLabel('Repeat new password').fill(CHANGED_PASSWORD)
    await page.getByRole('button', { name: 'Change password' }).click()
    await ready(page, 'Detection')

    await ensureTask(device)
    found.push(...await everyPage(page, 1440))
    found.push(...await detectionResult(page, 1440))

    expect(found, found.join('\n')).toEqual([])
    expect(pageErrors.filter((e) => !/status of 40[134]/.test(e))).toEqual([])
    await context.close()
  })

  test('has no serious violation on any page or on a detection result at 375 px', { timeout: 300_000 }, async ({ device, browser }) => {
    await ensureTask(device)
    const { page, context } = await openConsole(browser, device.url, 375)
    await page.goto(device.url + '/console/')
    await page.getByLabel('Password').fill(CHANGED_PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await ready(page, 'Detection')
    const found = [...await everyPage(page, 375), ...await detectionResult(page, 375)]
    expect(found, found.join('\n')).toEqual([])
    await context.close()
  })
})
