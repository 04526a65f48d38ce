/**
 * The console's Galleries page (spec 4.10 Face gallery, File import; README "Face galleries")
 * in real Chromium against the real device: a gallery and a person made in the page, face
 * pictures added by a real drop and by the file chooser (a picture without a face refused with
 * the count), search by image with the matches shown, an archive imported with its progress
 * and per-row errors, and a broken archive's failure; faces of a detection result and of a
 * search result added to persons ("Add to gallery": cropped in the browser, uploaded).
 */
import { readFileSync } from 'node:fs'
import sharp from 'sharp'
import { expect } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import { browserTest as test, openConsole } from '../helpers/browser.ts'
import { CHANGED_PASSWORD, type DeviceProcess } from '../helpers/device.ts'
import { zipOf } from '../helpers/zip.ts'
import { cropFace, samplePhoto, type SamplePhoto } from '../galleries/faces.ts'
import { samplePath, samplePeople } from '../inference/helpers.ts'

let device: DeviceProcess
let browser: Browser
let photo: SamplePhoto

test.beforeAll(async ({ device: started, mtk, browser: launched }) => {
  device = started
  browser = launched
  photo = await samplePhoto(device, mtk, 1)
  expect(photo.faces).toHaveLength(3)
})

/** Drops files on an element the way a browser does: dragover, then drop with a DataTransfer holding them. */
async function dropFiles(page: Page, selector: string, files: { name: string; type: string; bytes: Buffer }[]) {
  const transfer = await page.evaluateHandle((list) => {
    const data = new DataTransfer()
    for (const f of list) data.items.add(new File([Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0))], f.name, { type: f.type }))
    return data
  }, files.map((f) => ({ name: f.name, type: f.type, base64: f.bytes.toString('base64') })))
  await page.dispatchEvent(selector, 'dragover', { dataTransfer: transfer })
  await page.dispatchEvent(selector, 'drop', { dataTransfer: transfer })
}

/** A console page (1280 px wide) opened and signed in. */
async function signedIn(route: string, heading: string) {
  const session = await openConsole(browser, device.url, 1280)
  await session.page.goto(`${device.url}/console/#/${route}`)
  await session.page.getByLabel('Password').fill(CHANGED_PASSWORD)
  await session.page.getByRole('button', { name: 'Sign in' }).click()
  await session.page.getByRole('heading', { name: heading, level: 1 }).waitFor()
  return session
}

test.describe('console: galleries', () => {
  test('builds a face gallery, adds pictures by drop, searches by image and imports an archive with per-row errors (1280 px)', { timeout: 240_000 }, async () => {
    const { page, foreignRequests, pageErrors, screenshot, context } = await signedIn('galleries', 'Galleries')
    await page.getByText('No face gallery yet.').waitFor()

    // A gallery and a person, made in the page.
    await page.getByLabel('New gallery').fill('Staff')
    await page.getByRole('button', { name: 'Add gallery' }).click()
    const staff = page.locator('[data-testid="galleries"] li').filter({ hasText: 'Staff' })
    await staff.waitFor()
    expect(await staff.getByTestId('counts').textContent()).toBe('0 persons · 0 pictures')
    await page.getByLabel('Person id').fill('p0')
    await page.getByLabel('Name').fill('Ann')
    await page.getByRole('button', { name: 'Add person' }).click()
    const ann = page.locator('li.item[data-item-id="p0"]')
    await ann.waitFor()

    // A face picture dropped on the person; a picture without a face chosen: refused with the count.
    const face = await cropFace(photo, 0)
    await dropFiles(page, 'li.item[data-item-id="p0"] label.drop', [{ name: 'ann.jpg', type: 'image/jpeg', bytes: face }])
    await ann.getByTestId('added').waitFor()
    expect(await ann.getByTestId('added').textContent()).toBe('ann.jpg: added')
    const picture = ann.locator('img.thumb')
    await picture.waitFor()
    expect(await picture.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(160)
    const blank = await sharp({ create: { width: 320, height: 240, channels: 3, background: '#808080' } }).jpeg().toBuffer()
    await ann.getByLabel('Add pictures of Ann').setInputFiles({ name: 'blank.jpg', mimeType: 'image/jpeg', buffer: blank })
    const refused = ann.getByTestId('error')
    await refused.waitFor()
    expect(await refused.getByTestId('error-key').textContent()).toBe('api.error.GalleryFaceCount')
    expect(await refused.locator('[data-fact="Faces"]').textContent()).toBe('0')
    // The three-face photo: refused with the count, where the faces are in words, and what to do instead.
    await ann.getByLabel('Add pictures of Ann').setInputFiles({ name: 'group.jpg', mimeType: 'image/jpeg', buffer: photo.bytes })
    await expect.poll(() => refused.locator('[data-fact="Faces"]').textContent()).toBe('3')
    expect(await refused.getByTestId('error-action-text').textContent())
      .toBe('The photo shows 3 faces: use a photo with one face, or add from a detection (Detection page: “Add to gallery” on the face you mean).')
    expect(await refused.locator('[data-fact="Found"]').textContent()).toMatch(/^at \d+, \d+ \(\d+ × \d+ px\)(; at \d+, \d+ \(\d+ × \d+ px\)){2}$/)
    await expect.poll(() => staff.getByTestId('counts').textContent()).toBe('1 person · 1 picture')
    expect(await ann.locator('img.thumb').count()).toBe(1)

    // Search by image: the group photo, mirrored; Ann's face finds Ann first.
    const mirrored = await sharp(photo.bytes).flop().jpeg().toBuffer()
    await page.getByTestId('search-file').setInputFiles({ name: 'group.jpg', mimeType: 'image/jpeg', buffer: mirrored })
    const results = page.getByTestId('search-results')
    await results.waitFor()
    const regions = results.locator('li[data-region]')
    expect(await regions.count()).toBe(3)
    const annBox = photo.faces[0]!
    const annCentre = photo.size.width - (annBox.x + annBox.width / 2)
    const boxes = await regions.evaluateAll((lis) => lis.map((li) => li.getAttribute('data-box')!.split(',').map(Number)))
    const annRegion = boxes.findIndex(([x, , w]) => Math.abs(x! + w! / 2 - annCentre) < annBox.width / 2)
    expect(annRegion).toBeGreaterThanOrEqual(0)
    const best = regions.nth(annRegion).locator('tbody tr').first()
    expect(await best.getAttribute('data-item-id')).toBe('p0')
    expect(parseFloat((await best.getByTestId('similarity').textContent())!)).toBeGreaterThan(70)
    // Each face found is shown cut out of the searched image; a match names its gallery and shows the person's picture.
    // (cut in the browser, each when its image has loaded)
    await expect.poll(() => results.getByTestId('search-crop').count()).toBe(3)
    await expect.poll(() => results.getByTestId('search-crop').first().evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true)
    expect(await best.getByTestId('match-gallery').textContent()).toBe('Staff')
    await best.locator('img.thumb').waitFor()
    await screenshot('galleries-search')

    // An archive with one good row and three bad ones: progress to the end, counts, the reasons.
    const archive = await zipOf({
      'manifest.csv': ['personId,name,file', 'p1,Ben,faces/ben.jpg', 'p2,Nobody,faces/missing.jpg', 'p3,Blank,faces/blank.jpg', 'p1,Ben again,faces/ben.jpg'].join('\n'),
      'faces/ben.jpg': await cropFace(photo, 1),
      'faces/blank.jpg': blank,
    })
    await page.getByTestId('import-file').setInputFiles({ name: 'people.zip', mimeType: 'application/zip', buffer: archive })
    await page.getByTestId('import').click()
    const job = page.locator('[data-testid="import-job"][data-state="done"]')
    await job.waitFor()
    expect(await job.getByTestId('import-counts').textContent()).toBe('1 imported · 0 already there · 3 failed')
    expect(await job.getByTestId('import-progress').getAttribute('value')).toBe('4')
    expect(await job.getByTestId('import-progress').getAttribute('max')).toBe('4')
    const reasons = await job.locator('[data-testid="import-errors"] tbody tr').evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-row'), r.querySelector('[data-reason]')!.getAttribute('data-reason')]))
    expect(reasons).toEqual([['2', 'missing-file'], ['3', 'no-face'], ['4', 'duplicate-id']])
    // The imported person is listed with a picture.
    await page.locator('li.item[data-item-id="p1"] img.thumb').waitFor()
    await expect.poll(() => staff.getByTestId('counts').textContent()).toBe('2 persons · 2 pictures')
    await screenshot('galleries-import')

    // A file that is no archive: the job fails with the device's reason.
    await page.getByTestId('import-file').setInputFiles({ name: 'broken.zip', mimeType: 'application/zip', buffer: Buffer.from('not an archive') })
    await page.getByTestId('import').click()
    const failed = page.locator('[data-testid="import-job"][data-state="failed"]')
    await failed.waitFor()
    expect(await failed.getByTestId('error-key').textContent()).toBe('api.error.FaceImportArchiveInvalid')

    // The other kinds are galleries of their own: none yet.
    await page.getByLabel('Kind of gallery').selectOption('things')
    await page.getByText('No things gallery yet.').waitFor()

    expect(foreignRequests).toEqual([])
    expect(pageErrors.filter((e) => !/Failed to load resource/.test(e))).toEqual([])
    await context.close()
  })

  test('adds faces from a detection result and from a search result (cropped in the browser) to persons; search by image finds them', { timeout: 240_000 }, async () => {
    const { page, foreignRequests, pageErrors, screenshot, context } = await signedIn('detect', 'Detection')

    // Detection on a group photo: every face offers "Add to gallery".
    const group = readFileSync(samplePath(4))
    const { width } = await sharp(group).metadata()
    await page.getByTestId('algorithm').selectOption('face-detection')
    await page.getByTestId('file').setInputFiles({ name: 'group.jpg', mimeType: 'image/jpeg', buffer: group })
    await page.getByTestId('detect').click()
    await page.getByTestId('targets').waitFor()
    const rows = page.getByTestId('targets').locator('tbody tr')
    const faces = await rows.count()
    expect(faces).toBe(samplePeople[3])
    expect(await page.getByRole('button', { name: /^Add to gallery: face \d+$/ }).count()).toBe(faces)
    const boxOf = (row: number) => rows.nth(row).evaluate((tr) => ['x', 'y', 'Width', 'Height'].map((k) => Number(tr.querySelector(`[data-label="${k}"]`)!.textContent)))

    // The first face to a person that exists already: the device's refusal is shown, nothing is added.
    await page.getByRole('button', { name: 'Add to gallery: face 1' }).click()
    const form = page.getByTestId('add-face')
    await form.getByTestId('add-face-gallery').selectOption({ label: 'Staff' })
    await form.getByLabel('New person id').fill('p0')
    await form.getByLabel("New person's name").fill('Ann again')
    await form.getByRole('button', { name: 'Add face' }).click()
    expect(await form.getByTestId('error-key').textContent()).toBe('api.error.GalleryPersonExists')
    // Then to a new person, Dee.
    await form.getByLabel('New person id').fill('p4')
    await form.getByLabel("New person's name").fill('Dee')
    await form.getByRole('button', { name: 'Add face' }).click()
    expect(await form.getByTestId('face-added').textContent()).toBe('Face 1 added to Dee (Staff).')
    const dee = await boxOf(0)
    await screenshot('galleries-add-from-detection')

    // Search by image with the photo mirrored: Dee's face finds Dee first.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Galleries', exact: true }).click()
    await page.locator('li.item[data-item-id="p4"] img.thumb').waitFor()
    const mirrored = await sharp(group).flop().jpeg({ quality: 90 }).toBuffer()
    const search = async () => {
      await page.getByTestId('search-file').setInputFiles({ name: 'mirrored.jpg', mimeType: 'image/jpeg', buffer: mirrored })
      const regions = page.getByTestId('search-results').locator('li[data-region]')
      await expect.poll(() => regions.count()).toBe(faces)
      const boxes = await regions.evaluateAll((lis) => lis.map((li) => li.getAttribute('data-box')!.split(',').map(Number)))
      /** The region of the mirrored photo where a face of the original lies. */
      const regionOf = ([x, , w]: number[]) => boxes.findIndex(([rx, , rw]) => Math.abs(rx! + rw! / 2 - (width! - x! - w! / 2)) < w! / 2)
      return { regions, regionOf }
    }
    let { regions, regionOf } = await search()
    const deeRegion = regionOf(dee)
    expect(deeRegion).toBeGreaterThanOrEqual(0)
    const best = regions.nth(deeRegion).locator('tbody tr').first()
    expect(await best.getAttribute('data-item-id')).toBe('p4')
    expect(parseFloat((await best.getByTestId('similarity').textContent())!)).toBeGreaterThan(70)

    // From the search result: another face to a new person, Eve; listed at once, and found by the next search.
    const other = (deeRegion + 1) % faces
    await regions.nth(other).getByRole('button', { name: `Add to gallery: face ${other + 1}` }).click()
    const fromSearch = regions.nth(other).getByTestId('add-face')
    await fromSearch.getByLabel('New person id').fill('p5')
    await fromSearch.getByLabel("New person's name").fill('Eve')
    await fromSearch.getByRole('button', { name: 'Add face' }).click()
    expect(await fromSearch.getByTestId('face-added').textContent()).toBe(`Face ${other + 1} added to Eve (Staff).`)
    await page.locator('li.item[data-item-id="p5"] img.thumb').waitFor()
    await expect.poll(() => page.locator('[data-testid="galleries"] li').filter({ hasText: 'Staff' }).getByTestId('counts').textContent()).toBe('4 persons · 4 pictures')
    ;({ regions } = await search())
    expect(await regions.nth(other).locator('tbody tr').first().getAttribute('data-item-id')).toBe('p5')
    expect(await regions.nth(deeRegion).locator('tbody tr').first().getAttribute('data-item-id')).toBe('p4')

    expect(foreignRequests).toEqual([])
    expect(pageErrors.filter((e) => !/Failed to load resource/.test(e))).toEqual([])
    await context.close()
  })
})
