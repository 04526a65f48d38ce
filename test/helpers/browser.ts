import { mkdirSync } from 'node:fs'
import path from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { CHANGED_PASSWORD } from './device.ts'
import { deviceTest } from './device-fixture.ts'
import { until } from './processes.ts'

/**
 * Chromium's headless shell, Debian's `chromium-headless-shell` (test/provision.mjs installs it):
 * the same engine as the browser without its user interface, a third of the CPU for the same
 * tests (docs/developing.md "Tests"). CHROMIUM_PATH picks another build (e.g. /usr/bin/chromium).
 * The flags keep it offline and quiet.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium-headless-shell'
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

export const ARTIFACTS = path.resolve('test/artifacts')

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true })
}

/**
 * The device fixture (device-fixture.ts) with the file's Chromium: launched once, on the file's
 * first test (or `test.beforeAll`) that asks for `browser`, and closed after the file's last test.
 *
 *   import { browserTest as test } from '../helpers/browser.ts'
 *   test('…', async ({ device, browser }) => { const { page } = await openConsole(browser, device.url, 1440) … })
 *
 * Ask for `mtk` too when the page signs in with CHANGED_PASSWORD: the session changes the
 * initial password first.
 */
// eslint-disable-next-line no-empty-pattern -- vitest reads a fixture's dependencies from this pattern
export const browserTest = deviceTest.extend('browser', { scope: 'file' }, async ({}, { onCleanup }) => {
  const browser = await launchBrowser()
  onCleanup(() => browser.close())
  return browser
})

export interface ConsolePage {
  context: BrowserContext
  page: Page
  /** Requests to any host but the device (must stay empty). */
  foreignRequests: string[]
  /** Uncaught page errors and console.error lines. */
  pageErrors: string[]
  screenshot(name: string): Promise<string>
}

/** A fresh browser context at a given viewport width, watching for requests that leave the device. */
export async function openConsole(browser: Browser, deviceUrl: string, width: number, height = width < 600 ? 812 : 900): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport: { width, height } })
  const page = await context.newPage()
  // CI machines are loaded (2 cores, devices and sidecars starting in parallel): wait generously.
  page.setDefaultTimeout(60_000)
  const device = new URL(deviceUrl)
  const foreignRequests: string[] = []
  const pageErrors: string[] = []
  page.on('request', (request) => {
    const url = new URL(request.url())
    if (url.protocol === 'data:' || url.protocol === 'blob:') return
    if (url.hostname !== device.hostname) foreignRequests.push(request.url())
  })
  page.on('pageerror', (error) => pageErrors.push(error.message))
  page.on('console', (message) => { if (message.type() === 'error') pageErrors.push(message.text()) })
  mkdirSync(ARTIFACTS, { recursive: true })
  return {
    context,
    page,
    foreignRequests,
    pageErrors,
    async screenshot(name) {
      const file = path.join(ARTIFACTS, `${name}-${width}.png`)
      await page.screenshot({ path: file, fullPage: true })
      return file
    },
  }
}

/** Opens the console at `hash` (e.g. `#/live`) and signs in as admin with the changed password. */
export async function signIn(page: Page, deviceUrl: string, hash: string, password = CHANGED_PASSWORD): Promise<void> {
  await page.goto(`${deviceUrl}/console/${hash}`)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
}

/**
 * Follows the main navigation's link to a page: on a phone the navigation is folded behind its
 * menu button (docs/console-and-cli.md "Navigation"), which is opened first.
 */
export async function navigate(page: Page, name: string): Promise<void> {
  const nav = page.getByRole('navigation', { name: 'Main' })
  const menu = nav.getByTestId('menu-button')
  if (await menu.isVisible() && await menu.getAttribute('aria-expanded') !== 'true') await menu.click()
  await nav.getByRole('link', { name, exact: true }).click()
}

/** The page's heading is shown and nothing in it is still loading. */
export async function ready(page: Page, heading: string): Promise<void> {
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
  await page.waitForFunction(() => !document.querySelector('main')?.textContent?.includes('Loading…'))
}

/** A <video>'s playback position now and a little later, once it advances: the video plays. */
export const plays = (page: Page, testId: string) => until(async () => {
  const position = () => page.getByTestId(testId).evaluate((v: HTMLVideoElement) => v.currentTime)
  const before = await position()
  await new Promise((resolve) => setTimeout(resolve, 1500))
  const after = await position()
  return after > before + 0.5 && { before, after }
}, `${testId} to play`, 60_000)
