/**
 * The console's Algorithms page (spec 4.10; README "Algorithms and pipeline layouts") in real
 * Chromium against the real device: export → delete → install the exported package again, and
 * the device's refusals shown as spec 7.2 asks.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect } from 'vitest'
import yauzl from 'yauzl'
import { browserTest as test, openConsole } from '../helpers/browser.ts'
import { CHANGED_PASSWORD, type DeviceProcess } from '../helpers/device.ts'
import { MESSAGE_TEXT } from '../../runtime/console/messages.ts'

const ID = 'face-detection-near'
const shipped = JSON.parse(readFileSync(path.resolve('models/manifests', `${ID}.json`), 'utf8'))
const work = mkdtempSync(path.join(tmpdir(), 'console-algorithms-'))

let device: DeviceProcess
let mtk: string

// The session changes the initial password: the page signs in with CHANGED_PASSWORD.
test.beforeAll(async ({ device: started, mtk: session }) => {
  device = started
  mtk = session
})
test.afterAll(() => {
  rmSync(work, { recursive: true, force: true })
})

/** Entries of a zip file: name → bytes. */
async function unzip(file: string): Promise<Map<string, Buffer>> {
  const zip = await yauzl.openPromise(file, { lazyEntries: true })
  const out = new Map<string, Buffer>()
  for await (const entry of zip.eachEntry()) {
    const chunks: Buffer[] = []
    for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer)
    out.set(entry.fileName, Buffer.concat(chunks))
  }
  return out
}

/** The device's own algorithm table (spec 4.2) for one id. */
const pageRows = async (algorithmId: string) =>
  (await device.post('/gtw/cwai/Algorithm/page', { algorithmId, pageNum: 1, pageSize: 10 }, mtk)).body.resData.rows as { algorithmId: string }[]

test.describe('console: algorithms', () => {
  test('exports an algorithm, deletes it, installs the exported package again, and shows a refused package (1440 px)', { timeout: 180_000 }, async ({ browser }) => {
    const { page, foreignRequests, pageErrors, screenshot, context } = await openConsole(browser, device.url, 1440)
    await page.goto(device.url + '/console/#/algorithms')
    await page.getByLabel('Password').fill(CHANGED_PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Algorithms', level: 1 }).waitFor()
    const row = page.locator(`[data-testid="algorithms"] tr[data-algorithm-id="${ID}"]`)
    await row.waitFor()
    expect(await row.getByTestId('origin').textContent()).toBe('preset')
    expect(await row.locator('td').nth(3).textContent()).toBe(shipped.nodes.map((n: { action: string }) => n.action).join(' → '))
    await screenshot('algorithms')

    // Export: a POST with the mtk, saved under the device's Content-Disposition name.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: `Export ${ID}` }).click()])
    expect(download.suggestedFilename()).toBe(`${ID}-${shipped.version}.zip`)
    const zipFile = path.join(work, download.suggestedFilename())
    await download.saveAs(zipFile)
    const entries = await unzip(zipFile)
    expect(entries.has('manifest.json')).toBe(true)
    expect(JSON.parse(entries.get('manifest.json')!.toString('utf8')).algorithmId).toBe(ID)

    // Delete asks first; Escape keeps the algorithm, and focus starts on the safe choice.
    await page.getByRole('button', { name: `Delete ${ID}` }).click()
    const dialog = page.getByRole('dialog', { name: `Delete ${ID}?` })
    await dialog.waitFor()
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel')
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })
    expect(await row.count()).toBe(1)
    // Focus goes back to the button that opened the dialog (restored once the dialog has gone).
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(`Delete ${ID}`)
    await page.getByRole('button', { name: `Delete ${ID}` }).click()
    await dialog.getByRole('button', { name: 'Delete' }).click()
    await row.waitFor({ state: 'detached' })
    expect(await page.getByTestId('algorithms-notice').textContent()).toBe(`Deleted ${ID}.`)
    // The row is gone; focus moves to the list it was in.
    await page.waitForFunction(() => document.activeElement?.id === 'algorithm-list-heading')
    expect(await pageRows(ID)).toEqual([])

    // Install the exported package through the chunked upload: the algorithm is back, as a package.
    await page.getByTestId('package-file').setInputFiles(zipFile)
    await page.getByTestId('install').click()
    await page.getByTestId('installed').waitFor()
    expect(await page.getByTestId('installed').textContent()).toBe(ID)
    expect(await page.getByTestId('install-progress').getAttribute('value')).toBe('100')
    await row.waitFor()
    expect(await row.getByTestId('origin').textContent()).toBe('package')
    expect((await pageRows(ID)).map((r) => r.algorithmId)).toEqual([ID])

    // Once more: the id exists, until "Replace existing" is ticked.
    await page.getByTestId('install').click()
    await page.getByTestId('error').waitFor()
    expect(await page.getByTestId('error-key').textContent()).toBe('api.error.AlgorithmExists')
    expect(await page.locator('[data-fact="Algorithm"]').textContent()).toBe(ID)
    await page.getByLabel('Replace existing algorithms with the same id').check()
    await page.getByTestId('install').click()
    await page.getByTestId('installed').waitFor()
    expect(await page.getByTestId('error').count()).toBe(0)

    // A file that is no archive is refused by the device, with its reason.
    await page.getByTestId('package-file').setInputFiles({ name: 'not-a-package.zip', mimeType: 'application/zip', buffer: Buffer.from('plain text, not an archive\n') })
    await page.getByTestId('install').click()
    await page.getByTestId('error').waitFor()
    expect(await page.getByTestId('error-key').textContent()).toBe('api.error.AlgorithmPackageInvalid')
    expect(await page.getByTestId('error-text').textContent()).toBe(MESSAGE_TEXT['api.error.AlgorithmPackageInvalid'])
    expect(await page.locator('[data-fact="Reason"]').textContent()).toBe('not a zip or tar.gz archive')
    expect((await pageRows(ID)).map((r) => r.algorithmId)).toEqual([ID])
    await screenshot('algorithms-refused')

    expect(foreignRequests).toEqual([])
    expect(pageErrors.filter((e) => !/Failed to load resource/.test(e))).toEqual([])
    await context.close()
  })
})
