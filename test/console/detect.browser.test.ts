import { readFileSync } from 'node:fs'
import path from 'node:path'
import { expect } from 'vitest'
import type { Page } from 'playwright-core'
import { browserTest as test, openConsole } from '../helpers/browser.ts'
import { CHANGED_PASSWORD, type DeviceProcess } from '../helpers/device.ts'
import { startProxy, type Proxy } from '../helpers/proxy.ts'

const DEMO = path.resolve('node_modules/@vladmandic/face-api/demo')
// sample1.jpg: a group photo with 3 people, all facing the camera.
const SAMPLE = path.join(DEMO, 'sample1.jpg')
const SAMPLE_FACES = 3
// sample6.jpg is larger than the encoded-image limit this device is started with.
const LARGE = path.join(DEMO, 'sample6.jpg')
const IMAGE_LIMIT = 250_000
const CHUNK = 32 * 1024

test.override('deviceOptions', { env: { UPLOAD_MAX_CHUNK_BYTES: String(CHUNK), MAX_ENCODED_IMAGE_BYTES: String(IMAGE_LIMIT) } })

let device: DeviceProcess
let proxy: Proxy

// The session changes the initial password: the pages sign in with CHANGED_PASSWORD.
test.beforeAll(async ({ device: started, mtk: _session }) => {
  expect(readFileSync(SAMPLE).length).toBeLessThan(IMAGE_LIMIT)
  expect(readFileSync(LARGE).length).toBeGreaterThan(IMAGE_LIMIT)
  device = started
  // The browser talks to the device through a proxy that can break a connection on purpose.
  proxy = await startProxy(device.url)
})
test.afterAll(async () => {
  await proxy?.close()
})

async function signIn(page: Page) {
  await page.goto(proxy.url + '/console/#/detect')
  await page.getByLabel('Password').fill(CHANGED_PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Detection' }).waitFor()
  // The algorithm list comes from algorithm/page; pick face detection.
  await page.getByTestId('algorithm').selectOption('face-detection')
  await page.getByTestId('capabilities').waitFor()
}

test.describe('console: detection', () => {
  test('detects the faces of a sample photo through a chunked upload that resumes after a dropped connection', { timeout: 180_000 }, async ({ browser }) => {
    const { page, foreignRequests, pageErrors, screenshot, context } = await openConsole(browser, proxy.url, 1440)
    await signIn(page)
    // Live capabilities are shown, with the limits this device runs with.
    expect(await page.getByTestId('capabilities').textContent()).toContain(`${CHUNK} bytes`)

    const chunks = Math.ceil(readFileSync(SAMPLE).length / CHUNK)
    expect(chunks).toBeGreaterThan(3)
    proxy.seen.length = 0
    // The connection of the third chunk is cut halfway through its body.
    proxy.rule = (r) => (r.path.endsWith('/uploadTemp') && r.n === 3 ? 'drop-mid-body' : 'pass')
    await page.getByTestId('file').setInputFiles(SAMPLE)
    expect(await page.getByTestId('file-name').textContent()).toBe('sample1.jpg')
    await page.getByTestId('detect').click()
    await page.getByTestId('target-count').waitFor({ timeout: 120_000 })
    proxy.rule = () => 'pass'

    expect(await page.getByTestId('target-count').textContent()).toBe(String(SAMPLE_FACES))
    expect(await page.locator('[data-testid="targets"] tbody tr').count()).toBe(SAMPLE_FACES)
    const labels = await page.locator('[data-testid="targets"] tbody tr td:nth-child(2)').allTextContents()
    expect(labels).toEqual(Array(SAMPLE_FACES).fill('face'))
    // The upload went on after the drop by resending chunk 0 with the same clientRequestId (spec 4.12):
    // at least the dropped request and the resent chunk 0 came on top of the chunks, and no second
    // session was opened (a fresh upload would have left the first one open).
    const uploads = proxy.seen.filter((r) => r.path.endsWith('/uploadTemp'))
    expect(uploads.length).toBeGreaterThanOrEqual(chunks + 2)
    const capabilities = await device.post('/gtw/cwai/atomic/model/uploadCapabilities', {}, await device.adminToken())
    expect(capabilities.body.resData.activeSessions).toBe(0)
    expect(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('device-console.upload.')))).toEqual([])
    expect(await page.getByTestId('progress').getAttribute('value')).toBe('100')

    // The annotated picture is shown; BlazeFace gives 6 landmarks per face, drawn over it, and the toggle hides them.
    expect(await page.getByTestId('full-picture').getAttribute('src')).toMatch(/^(data:image\/jpeg;base64,|https?:|\/)/)
    await page.locator('svg.overlay circle.landmark').first().waitFor()
    expect(await page.locator('svg.overlay circle.landmark').count()).toBe(SAMPLE_FACES * 6)
    await screenshot('detect-result')
    await page.getByTestId('toggle-landmarks').press('Space')
    expect(await page.locator('svg.overlay circle.landmark').count()).toBe(0)
    await page.getByTestId('toggle-landmarks').check()

    // Raw JSON is there, and merges nothing away: areaList with the targets.
    await page.getByText('Raw JSON').click()
    const raw = JSON.parse((await page.getByTestId('raw-json').textContent())!)
    expect(raw.algorithmCode).toBe('face-detection')
    expect(raw.areaList.flatMap((a: { targetList: unknown[] }) => a.targetList)).toHaveLength(SAMPLE_FACES)

    expect(foreignRequests).toEqual([])
    expect(pageErrors.filter((e) => !/Failed to load resource/.test(e))).toEqual([])
    await context.close()
  })

  test('an oversized image shows its actual size, the limit and the recommended action (375 px)', { timeout: 180_000 }, async ({ browser }) => {
    const { page, screenshot, context } = await openConsole(browser, proxy.url, 375)
    await signIn(page)
    proxy.seen.length = 0
    await page.getByTestId('file').setInputFiles(LARGE)
    await page.getByTestId('detect').click()
    await page.getByTestId('error').waitFor()
    expect(await page.getByTestId('error-key').textContent()).toBe('api.error.imageInputTooLarge')
    expect(await page.locator('[data-fact="Limit"]').textContent()).toBe(`244.1 KB (${IMAGE_LIMIT} bytes)`)
    expect(await page.locator('[data-fact="Actual size"]').textContent()).toContain(`(${readFileSync(LARGE).length} bytes)`)
    expect(await page.getByTestId('error-action').textContent()).toBe('RESIZE_OR_RECOMPRESS_IMAGE')
    // The limit is the device's live one, so nothing was uploaded for nothing.
    expect(proxy.seen.filter((r) => r.path.endsWith('/uploadTemp'))).toEqual([])
    await screenshot('detect-too-large')

    // A small image then goes through, at 375 px too.
    await page.getByTestId('file').setInputFiles(SAMPLE)
    await page.getByTestId('detect').click()
    await page.getByTestId('target-count').waitFor({ timeout: 120_000 })
    expect(await page.getByTestId('target-count').textContent()).toBe(String(SAMPLE_FACES))
    await screenshot('detect-result')
    await context.close()
  })

  test('a 401 in the middle of an upload returns to sign-in; after signing in the upload starts as a new session (spec 5.3)', { timeout: 180_000 }, async ({ browser }) => {
    const { page, screenshot, context } = await openConsole(browser, proxy.url, 1440)
    await signIn(page)
    await page.getByTestId('file').setInputFiles(SAMPLE)
    let chunkRequests = 0
    proxy.rule = (r) => (r.path.endsWith('/uploadTemp') && ++chunkRequests === 3 ? 'hold' : 'pass')
    await page.getByTestId('detect').click()
    await proxy.held()
    // The session ends while chunk 2 is on its way; the console resumes, and the device answers 401.
    const mtk = await page.evaluate(() => JSON.parse(sessionStorage.getItem('device-console.session')!).mtk as string)
    expect((await device.post('/gtw/cwai/login/Logout', {}, mtk)).body.resCode).toBe(1)
    proxy.rule = () => 'pass'
    proxy.releaseHeld()
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    expect(await page.getByTestId('notice').textContent()).toBe('Your session has ended. Sign in again.')
    expect(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('device-console.upload.')))).toEqual([])

    await page.getByLabel('Password').fill(CHANGED_PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Detection' }).waitFor()
    expect(await page.getByTestId('notice').textContent()).toBe('The previous upload was interrupted when the session ended; it starts again as a new upload.')
    expect(await page.getByTestId('file-name').textContent()).toBe('sample1.jpg')
    await screenshot('detect-interrupted')
    await page.getByTestId('algorithm').selectOption('face-detection')
    await page.getByTestId('detect').click()
    await page.getByTestId('target-count').waitFor({ timeout: 120_000 })
    expect(await page.getByTestId('target-count').textContent()).toBe(String(SAMPLE_FACES))
    // The interrupted session was cancelled after signing in again: no reservation is left behind.
    const capabilities = await device.post('/gtw/cwai/atomic/model/uploadCapabilities', {}, await device.adminToken())
    expect(capabilities.body.resData.activeSessions).toBe(0)
    await context.close()
  })

  test('draws the mask polygons of a text-detection result and toggles them', { timeout: 180_000 }, async ({ browser }) => {
    // A PNG with two lines of printed text, rendered by the browser itself.
    const { page, context, screenshot } = await openConsole(browser, proxy.url, 1440)
    await page.setContent('<body style="margin:0;background:#fff"><p style="font:64px sans-serif;margin:40px">EDGE DEVICE 2026</p><p style="font:64px sans-serif;margin:40px">Hello console</p></body>')
    const png = await page.screenshot({ type: 'png', clip: { x: 0, y: 0, width: 900, height: 360 } })
    await signIn(page)
    await page.getByTestId('algorithm').selectOption('text-ocr')
    await page.getByTestId('file').setInputFiles({ name: 'text.png', mimeType: 'image/png', buffer: png })
    await page.getByTestId('detect').click()
    await page.getByTestId('target-count').waitFor({ timeout: 120_000 })
    const lines = Number(await page.getByTestId('target-count').textContent())
    expect(lines).toBeGreaterThanOrEqual(2)
    await page.locator('svg.overlay polygon.mask').first().waitFor()
    expect(await page.locator('svg.overlay polygon.mask').count()).toBe(lines)
    expect(await page.locator('[data-testid="targets"] tbody').textContent()).toMatch(/EDGE|Hello/i)
    await screenshot('detect-ocr')
    await page.getByTestId('toggle-polygons').uncheck()
    expect(await page.locator('svg.overlay polygon.mask').count()).toBe(0)
    await context.close()
  })

  test('refuses a file that is not a JPEG, PNG or BMP image before uploading it, and takes a dropped image', { timeout: 120_000 }, async ({ browser }) => {
    const { page, context } = await openConsole(browser, proxy.url, 1440)
    await signIn(page)
    await page.getByTestId('file').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') })
    expect(await page.getByTestId('error-text').textContent()).toBe('notes.txt is not a JPEG, PNG or BMP image.')
    expect(await page.getByTestId('detect').isDisabled()).toBe(true)

    // Dropping an image on the drop zone chooses it.
    const base64 = readFileSync(SAMPLE).toString('base64')
    const transfer = await page.evaluateHandle((data) => {
      const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0))
      const dt = new DataTransfer()
      dt.items.add(new File([bytes], 'dropped.jpg', { type: 'image/jpeg' }))
      return dt
    }, base64)
    await page.locator('label.drop').dispatchEvent('drop', { dataTransfer: transfer })
    expect(await page.getByTestId('file-name').textContent()).toBe('dropped.jpg')
    expect(await page.getByTestId('error').count()).toBe(0)
    expect(await page.getByTestId('detect').isDisabled()).toBe(false)
    await context.close()
  })
})
