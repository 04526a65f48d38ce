/**
 * The console as an operator's tool, in real Chromium against the real device: it leaves no
 * task behind (so an algorithm it used can be deleted), lists and cancels every task, shows the
 * device's error details with the next step (the helmet pipeline's missing model → the model
 * upload), and reports upload progress as bytes are sent.
 */
import { expect } from 'vitest'
import type { Page } from 'playwright-core'
import path from 'node:path'
import { browserTest as test, openConsole } from '../helpers/browser.ts'
import { CHANGED_PASSWORD, type DeviceProcess } from '../helpers/device.ts'
import { helmetClassifier } from '../helpers/tiny-models.ts'
import { encodeBmp24 } from '../inference/images.ts'

const SAMPLE = path.resolve('node_modules/@vladmandic/face-api/demo/sample1.jpg')

let device: DeviceProcess

// The session changes the initial password: the pages sign in with CHANGED_PASSWORD.
test.beforeAll(async ({ device: started, mtk: _session }) => {
  device = started
})

async function signIn(page: Page, hash = '#/detect') {
  await page.goto(`${device.url}/console/${hash}`)
  await page.getByLabel('Password').fill(CHANGED_PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
}

/** The device's own task list (created tasks). */
const createdTasks = async () => {
  const answer = await device.post('/v1/cwai/aihost/QueryTaskList', {}, await device.adminToken())
  expect(answer.body.resCode).toBe(1)
  return answer.body.resData.rows as { taskId: string; algorithmCode: string; detections: number }[]
}

async function detect(page: Page, algorithm: string, file: string | { name: string; mimeType: string; buffer: Buffer }) {
  await page.getByTestId('algorithm').selectOption(algorithm)
  await page.getByTestId('file').setInputFiles(file)
  await page.getByTestId('detect').click()
}

/** Noise as a 24-bit BMP: an image the device decodes, of a chosen size (3 bytes a pixel). */
function noiseBmp(width: number, height: number): Buffer {
  const rgb = Buffer.alloc(width * height * 3)
  let seed = 7
  for (let i = 0; i < rgb.length; i++) rgb[i] = (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24
  return encodeBmp24(rgb, width, height)
}

test.describe('console: operator', () => {
  test('reuses one task per algorithm, cancels it on leaving the Detection page, and lists and cancels other tasks so the algorithm can be deleted', { timeout: 240_000 }, async ({ browser }) => {
    const { page, pageErrors, foreignRequests, screenshot, context } = await openConsole(browser, device.url, 1440)
    await signIn(page)
    await page.getByRole('heading', { name: 'Detection', level: 1 }).waitFor()
    await expect.poll(() => page.title()).toBe('Detection · Edge AI device')

    // Two detections with face detection: one task, reused (spec 1 step 6).
    for (let i = 0; i < 2; i++) {
      await detect(page, 'face-detection', SAMPLE)
      await page.getByTestId('target-count').waitFor({ timeout: 120_000 })
      expect(await page.getByTestId('target-count').textContent()).toBe('3')
      // The time the sidecar spent on this image, from the task's stage timings.
      await expect.poll(() => page.getByTestId('inference-time').textContent().catch(() => null)).toMatch(/^\d+ ms$/)
    }
    const during = await createdTasks()
    expect(during.map((t) => [t.algorithmCode, t.detections])).toEqual([['face-detection', 2]])

    // A task someone else created (an integrator) on the same algorithm.
    const mtk = await device.adminToken()
    const external = 'integrator-task-1'
    expect((await device.post('/v1/cwai/aihost/PTaskCreate', { taskId: external, algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) }, mtk)).body.resCode).toBe(1)

    // Leaving the Detection page cancels the console's own task; the other one blocks the delete,
    // named in the error, whose next step opens the Tasks page for that algorithm.
    await page.getByRole('link', { name: 'Algorithms', exact: true }).click()
    await page.getByRole('heading', { name: 'Algorithms', level: 1 }).waitFor()
    await expect.poll(() => page.title()).toBe('Algorithms · Edge AI device')
    await expect.poll(async () => (await createdTasks()).map((t) => t.taskId)).toEqual([external])
    await page.getByRole('button', { name: 'Delete face-detection', exact: true }).click()
    expect(await page.getByTestId('delete-text').textContent()).toContain('afterwards. A shipped algorithm stays deleted across restarts until a package with its id is installed. Export it first')
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click()
    await page.getByTestId('error').waitFor()
    expect(await page.getByTestId('error-key').textContent()).toBe('api.error.AlgorithmInUse')
    expect(await page.locator('[data-fact="Tasks using it"]').textContent()).toBe(external)
    await page.getByTestId('error-next').click()

    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor()
    await expect.poll(() => page.title()).toBe('Tasks · Edge AI device')
    const row = page.locator(`[data-testid="tasks"] tr[data-task-id="${external}"]`)
    await row.waitFor()
    expect(await row.getByTestId('task-algorithm').textContent()).toBe('face-detection')
    expect(await row.textContent()).toContain('Created, model loaded')
    expect(await row.locator('td[data-label="Created by"]').textContent()).toBe('admin')
    await screenshot('tasks')
    await page.getByRole('button', { name: `Cancel task ${external}` }).click()
    await page.getByTestId('no-tasks').waitFor()
    expect(await page.locator('main.tasks .hint').first().textContent()).toContain('until it is cancelled. Tasks this browser tab')
    expect(await page.getByTestId('tasks-notice').textContent()).toBe(`Cancelled task ${external}.`)

    // Now the delete goes through, and no task is left.
    await page.getByRole('link', { name: 'Algorithms', exact: true }).click()
    await page.getByRole('button', { name: 'Delete face-detection', exact: true }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click()
    await page.locator('[data-testid="algorithms"] tr[data-algorithm-id="face-detection"]').waitFor({ state: 'detached' })
    expect(await page.getByTestId('algorithms-notice').textContent()).toBe('Deleted face-detection.')
    expect(await createdTasks()).toEqual([])

    // Sign-out cancels what the console created, too.
    await page.getByRole('link', { name: 'Detection', exact: true }).click()
    await detect(page, 'face-detection-near', SAMPLE)
    await page.getByTestId('target-count').waitFor({ timeout: 120_000 })
    expect((await createdTasks()).map((t) => t.algorithmCode)).toEqual(['face-detection-near'])
    await page.getByTestId('sign-out').click()
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    expect(await createdTasks()).toEqual([])

    expect(foreignRequests).toEqual([])
    expect(pageErrors.filter((e) => !/Failed to load resource/.test(e))).toEqual([])
    await context.close()
  })

  test('shows every detail of the helmet pipeline’s error, offers the model upload, and the uploaded model makes it work; the model deletes again', { timeout: 240_000 }, async ({ browser }) => {
    const { page, screenshot, context } = await openConsole(browser, device.url, 1440)
    await signIn(page)
    await detect(page, 'no-safety-helmet-analysis', SAMPLE)
    await page.getByTestId('error').waitFor({ timeout: 120_000 })
    expect(await page.getByTestId('error-key').textContent()).toBe('api.error.TaskCreateFailed')
    expect(await page.locator('[data-fact="Missing model"]').textContent()).toBe('helmet-classifier')
    expect(await page.locator('[data-fact="Algorithm"]').textContent()).toBe('no-safety-helmet-analysis')
    // The machine code is kept under "Technical details", not in the sentence.
    expect(await page.getByTestId('error-action').isVisible()).toBe(false)
    await screenshot('detect-missing-model')

    await page.getByTestId('error-next').click()
    await page.getByRole('heading', { name: 'Models', level: 1 }).waitFor()
    expect(await page.getByTestId('model-id').inputValue()).toBe('helmet-classifier')
    await page.getByTestId('model-file').setInputFiles({ name: 'helmet.onnx', mimeType: 'application/octet-stream', buffer: Buffer.from(helmetClassifier()) })
    await page.getByTestId('model-upload').click()
    const row = page.locator('[data-testid="models"] tr[data-model-id="helmet-classifier"]')
    await row.waitFor()
    expect(await page.getByTestId('models-notice').textContent()).toBe('Uploaded helmet-classifier.')

    // The pipeline now creates its task and answers.
    await page.getByRole('link', { name: 'Detection', exact: true }).click()
    await detect(page, 'no-safety-helmet-analysis', SAMPLE)
    await page.getByTestId('target-count').waitFor({ timeout: 120_000 })

    // Delete it again (the console's task was cancelled on leaving the page, so nothing holds it).
    await page.getByRole('link', { name: 'Models', exact: true }).click()
    await page.getByRole('button', { name: 'Delete helmet-classifier' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click()
    await row.waitFor({ state: 'detached' })
    expect(await page.getByTestId('models-notice').textContent()).toBe('Deleted helmet-classifier.')
    const models = await device.post('/gtw/cwai/atomic/Model/list', { source: 'user' }, await device.adminToken())
    expect(models.body.resData.rows).toEqual([])
    await context.close()
  })

  test('reports upload progress as bytes are sent: a 3 MB image shows at least three intermediate values', { timeout: 180_000 }, async ({ browser }) => {
    const { page, context } = await openConsole(browser, device.url, 1440)
    await signIn(page)
    await page.getByTestId('capabilities').waitFor()
    const image = noiseBmp(1024, 1024)
    expect(image.length).toBeGreaterThan(3_000_000)
    // About 1 MB/s upstream, so the upload takes seconds as on a real network.
    const cdp = await context.newCDPSession(page)
    await cdp.send('Network.enable')
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 1_000_000 })
    await page.evaluate(() => {
      const seen: number[] = []
      ;(window as unknown as { progressSeen: number[] }).progressSeen = seen
      setInterval(() => {
        const value = document.querySelector<HTMLProgressElement>('[data-testid="progress"]')?.value
        if (value !== undefined && seen[seen.length - 1] !== value) seen.push(value)
      }, 10)
    })
    await detect(page, 'face-detection-near', { name: 'noise.bmp', mimeType: 'image/bmp', buffer: image })
    await page.getByTestId('target-count').waitFor({ timeout: 120_000 })
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 })
    const seen = await page.evaluate(() => (window as unknown as { progressSeen: number[] }).progressSeen)
    expect(seen[seen.length - 1]).toBe(100)
    const intermediate = seen.filter((v) => v > 0 && v < 100)
    expect(intermediate.length, `progress values seen: ${seen.join(', ')}`).toBeGreaterThanOrEqual(3)
    // Rising only.
    expect([...seen].sort((a, b) => a - b)).toEqual(seen)
    await context.close()
  })

  test('fits a 375 px screen: no page scrolls sideways, the result is scrolled into view, tables are cards, the Device page speaks in words', { timeout: 240_000 }, async ({ browser }) => {
    const { page, pageErrors, screenshot, context } = await openConsole(browser, device.url, 375)
    const favicon = await fetch(`${device.url}/console/favicon.svg`)
    expect(favicon.status).toBe(200)
    await signIn(page)
    await page.getByRole('heading', { name: 'Detection', level: 1 }).waitFor()
    const sideways = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)

    // face-presence answers yes/no: shown as words, not only in the raw JSON.
    await detect(page, 'face-presence', SAMPLE)
    await page.getByTestId('target-count').waitFor({ timeout: 120_000 })
    expect(await page.getByTestId('area-detected').first().textContent()).toBe('yes')
    // The picker cannot wrap a long name: it is shown in full below it.
    expect(await page.getByTestId('algorithm-name').textContent()).toBe('Face presence alarm (BlazeFace + logic)')
    expect(await page.getByTestId('algorithm-name').evaluate((e) => e.getBoundingClientRect().right)).toBeLessThanOrEqual(375)
    // The result is below the form on a narrow screen: it was brought into view.
    await expect.poll(() => page.locator('#result-heading').evaluate((h) => { const r = h.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight })).toBe(true)
    expect(await sideways()).toBe(0)
    await screenshot('operator-detect')

    for (const [hash, heading, ready] of [
      ['#/tasks', 'Tasks', '[data-testid="no-tasks"], [data-testid="tasks"]'],
      ['#/algorithms', 'Algorithms', '[data-testid="algorithms"]'],
      ['#/models', 'Models', '[data-testid="models"]'],
      ['#/logs', 'Logs', '[data-testid="log-lines"] li'],
      ['#/api', 'Try the API', '[data-testid="api-route"] option:nth-child(2)'],
      ['#/metrics', 'Metrics', '[data-testid="graph-memory"]'],
      ['#/device', 'Device', '[data-testid="status"] dl.fields'],
    ] as const) {
      await page.evaluate((h) => { location.hash = h }, hash)
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
      await page.locator(ready).first().waitFor({ state: 'attached' })
      await expect.poll(() => page.title()).toBe(`${heading} · Edge AI device`)
      expect(await sideways(), `${heading} scrolls sideways`).toBe(0)
      await screenshot(`operator-${heading.toLowerCase()}`)
    }
    // Algorithms: each row is a card, its actions on screen.
    const del = page.getByRole('button', { name: 'Delete text-ocr', exact: true })
    await page.evaluate(() => { location.hash = '#/algorithms' })
    await del.scrollIntoViewIfNeeded()
    const box = (await del.boundingBox())!
    expect(box.x + box.width).toBeLessThanOrEqual(375)
    expect(await page.locator('[data-testid="algorithms"] thead').evaluate((t) => t.getBoundingClientRect().height)).toBeLessThanOrEqual(1)

    // Device: labels in words, durations and times, no raw nulls or enum codes.
    await page.evaluate(() => { location.hash = '#/device' })
    await page.locator('[data-testid="status"] dl').first().waitFor()
    const status = page.getByTestId('status')
    expect(await status.locator('dd[data-field="uptimeSeconds"]').textContent()).toMatch(/^\d+ (s|min \d+ s|h \d+ min|d \d+ h)$/)
    expect(await status.locator('dd[data-field="timestamp"]').textContent()).not.toMatch(/^\d{13}$/)
    expect(await status.locator('dt').allTextContents()).not.toContain('uptimeSeconds')
    expect(await status.textContent()).not.toContain('null')
    await page.getByTestId('algorithms').locator('td[data-label="Usage"]').first().waitFor()
    expect(await page.getByTestId('algorithms').locator('td[data-label="Usage"]').allTextContents()).toContain('Image analysis')
    expect(await page.getByTestId('algorithms').locator('td[data-label="Status"]').first().textContent()).toBe('Ready')
    expect(pageErrors.filter((e) => !/Failed to load resource/.test(e))).toEqual([])
    await context.close()
  })

  test('states the password rule and gives password managers the account name', { timeout: 60_000 }, async ({ browser }) => {
    const { page, context } = await openConsole(browser, device.url, 1440)
    await signIn(page)
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.getByRole('heading', { name: 'Change password', level: 1 }).waitFor()
    await expect.poll(() => page.title()).toBe('Change password · Edge AI device')
    expect(await page.getByTestId('password-rule').textContent()).toBe('At least 8 characters, different from the current password.')
    const username = page.locator('input[autocomplete="username"]')
    expect(await username.inputValue()).toBe('admin')
    expect(await page.getByLabel('New password', { exact: true }).getAttribute('minlength')).toBe('8')
    await context.close()
  })

  test('follows the device log live: a line written after the viewer opened appears, and the text filter finds it', { timeout: 120_000 }, async ({ browser }) => {
    const { page, context } = await openConsole(browser, device.url, 1440)
    await signIn(page, '#/logs')
    await page.getByRole('heading', { name: 'Logs', level: 1 }).waitFor()
    await page.locator('[data-testid="log-lines"] li').first().waitFor()
    expect(await page.getByTestId('log-follow').isChecked()).toBe(true)
    // A task created now writes "task created" with its id.
    const taskId = `log-probe-${Date.now()}`
    const mtk = await device.adminToken()
    expect((await device.post('/v1/cwai/aihost/PTaskCreate', { taskId, algorithmCode: 'text-ocr', algorithmUpdateTime: String(Date.now()) }, mtk)).body.resCode).toBe(1)
    const line = page.locator('[data-testid="log-lines"] li', { hasText: `taskId=${taskId}` })
    await line.first().waitFor({ timeout: 30_000 })
    expect(await line.first().locator('.log-msg').textContent()).toBe('task created')
    expect(await line.first().locator('.badge').textContent()).toBe('tasks')
    // The text filter asks the device: only lines naming the task remain.
    await page.getByTestId('log-text').fill(taskId)
    await expect.poll(async () => {
      const texts = await page.locator('[data-testid="log-lines"] li').allTextContents()
      return texts.length > 0 && texts.every((t) => t.includes(taskId))
    }, { timeout: 15_000 }).toBe(true)
    expect((await device.post('/v1/cwai/aihost/PTaskCancle', { taskId, algorithmCode: 'text-ocr' }, mtk)).body.resCode).toBe(1)
    await context.close()
  })

  test('the API explorer builds a form from the interface document and runs algorithm/page with the session', { timeout: 60_000 }, async ({ browser }) => {
    const { page, context } = await openConsole(browser, device.url, 1440)
    await signIn(page, '#/api')
    await page.getByRole('heading', { name: 'Try the API', level: 1 }).waitFor()
    await page.getByTestId('api-route').locator('option', { hasText: '/gtw/cwai/algorithm/page' }).first().waitFor({ state: 'attached' })
    await page.getByTestId('api-route').selectOption('/gtw/cwai/algorithm/page')
    await page.locator('[data-field="algorithmUsage"]').fill('2')
    await page.locator('[data-field="pageSize"]').fill('3')
    expect(JSON.parse((await page.getByTestId('api-body').textContent())!)).toEqual({ algorithmUsage: '2', pageSize: 3 })
    await page.getByTestId('api-send').click()
    await page.getByTestId('api-answer').waitFor()
    const answer = JSON.parse((await page.getByTestId('api-answer').textContent())!)
    const direct = await device.post('/gtw/cwai/algorithm/page', { algorithmUsage: '2', pageSize: 3 }, await device.adminToken())
    expect(answer).toEqual(direct.body.resData)
    expect(answer.rows).toHaveLength(3)

    // A refused value shows the device's error with its details.
    await page.locator('[data-field="pageSize"]').fill('100000')
    await page.getByTestId('api-send').click()
    await page.getByTestId('error').waitFor()
    expect(await page.getByTestId('error-key').textContent()).toBe('api.error.InvalidParam')
    await context.close()
  })

  test('graphs the device’s metrics over time from readings kept while signed in, across pages', { timeout: 90_000 }, async ({ browser }) => {
    const { page, pageErrors, context } = await openConsole(browser, device.url, 1440)
    await signIn(page, '#/metrics')
    await page.getByRole('heading', { name: 'Metrics', level: 1 }).waitFor()
    // Two readings make a rate: the requests graph then names the metrics route itself.
    const requests = page.getByTestId('graph-requests')
    await requests.locator('li[data-series="/gtw/cwai/System/Metrics"]').waitFor({ timeout: 30_000 })
    expect(await requests.locator('li[data-series="/gtw/cwai/System/Metrics"] [data-testid="latest"]').textContent()).toMatch(/^\d+(\.\d)?\/min$/)
    expect(await page.getByTestId('graph-memory').locator('[data-testid="latest"]').textContent()).toMatch(/^\d+(\.\d+)? MB$/)
    expect(await page.getByTestId('graph-cpu').locator('[data-testid="latest"]').textContent()).toMatch(/^\d+\.\d %$/)
    expect(await requests.locator('polyline').count()).toBeGreaterThan(0)
    // The readings are the tab's, not the page's: leaving and coming back keeps them.
    const before = Number(await page.getByTestId('sample-count').textContent())
    expect(await page.locator('main.metrics .hint').first().textContent()).toMatch(/this tab only\. \d+ reading/)
    expect(before).toBeGreaterThanOrEqual(2)
    await page.getByRole('link', { name: 'Device', exact: true }).click()
    await page.getByRole('heading', { name: 'Device', level: 1 }).waitFor()
    await page.getByRole('link', { name: 'Metrics', exact: true }).click()
    expect(Number(await page.getByTestId('sample-count').textContent())).toBeGreaterThanOrEqual(before)
    expect(pageErrors.filter((e) => !/Failed to load resource/.test(e))).toEqual([])
    await context.close()
  })
})
