import { mkdirSync } from 'node:fs'
import path from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'

/** Debian's chromium (.ci/run installs it); flags keep it offline and quiet. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

export const ARTIFACTS = path.resolve('test/artifacts')

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true })
}

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
