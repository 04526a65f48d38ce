/**
 * The console's Audio and System pages (spec 4.10 Audio, System; README "Audio", "System
 * settings") in real Chromium against the real device: an audio file added, play-tested and
 * played on a speaker on loopback; a refused file; time zone, image quality, logo (an SVG
 * sanitised, shown in the header) and debug settings changed and read back from the device.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect } from 'vitest'
import { browserTest as test, openConsole } from '../helpers/browser.ts'
import { CHANGED_PASSWORD, type DeviceProcess } from '../helpers/device.ts'
import { startSpeaker, type SpeakerReceiver } from '../helpers/speaker-receiver.ts'

const FFMPEG = path.resolve('node_modules/@ffmpeg-installer/linux-x64/ffmpeg')
const work = mkdtempSync(path.join(tmpdir(), 'console-audio-'))

test.override('deviceOptions', { env: { TIME_SERVICE: 'none' } })

let device: DeviceProcess
let mtk: string
let speaker: SpeakerReceiver

test.beforeAll(async ({ device: started, mtk: session }) => {
  device = started
  mtk = session
  speaker = await startSpeaker()
})
test.afterAll(async () => {
  await speaker?.close()
  rmSync(work, { recursive: true, force: true })
})

const query = async (route: string) => (await device.post(route, {}, mtk)).body.resData

test.describe('console: audio and system settings', () => {
  test('adds, tests and plays audio, and changes time, image quality, logo and debug settings (1280 px)', { timeout: 180_000 }, async ({ browser }) => {
    const wav = path.join(work, 'tone.wav')
    execFileSync(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=2', '-ac', '1', wav])
    const { page, foreignRequests, pageErrors, screenshot } = await openConsole(browser, device.url, 1280)
    await page.goto(device.url + '/console/#/audio')
    await page.getByLabel('Password').fill(CHANGED_PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Audio', level: 1 }).waitFor()
    // The header shows the device's (default) logo, fetched with the mtk.
    await page.getByTestId('brand-logo').waitFor()

    await page.getByTestId('audio-file').setInputFiles(wav)
    await page.getByTestId('audio-upload').click()
    await page.getByTestId('audio-notice').waitFor()
    const [file] = (await query('/gtw/cwai/Audio/AudioFilePage')).rows
    expect(await page.getByTestId('audio-notice').textContent()).toBe(`Added tone.wav (${(file.durationMs / 1000).toFixed(2)} s).`)
    await page.getByRole('button', { name: 'Play test tone.wav' }).click()
    await page.getByTestId('play-test').waitFor()
    expect(await page.getByTestId('decoded-duration').textContent()).toBe(`${(file.durationMs / 1000).toFixed(2)} s`)
    // The preview plays in the page: Chromium decodes the MP3 the device serves.
    await expect.poll(() => page.getByTestId('preview').evaluate((a: HTMLAudioElement) => a.readyState)).toBeGreaterThanOrEqual(1)
    expect(await page.getByTestId('preview').evaluate((a: HTMLAudioElement) => a.duration)).toBeCloseTo(file.durationMs / 1000, 1)

    // A file that is not audio: the device's refusal, as spec 7.2 asks.
    await page.getByTestId('audio-file').setInputFiles({ name: 'not-audio.wav', mimeType: 'audio/wav', buffer: Buffer.from('plain text, not audio\n') })
    await page.getByTestId('audio-upload').click()
    await page.getByTestId('error').waitFor()
    expect(await page.getByTestId('error-key').textContent()).toBe('api.error.AudioFileInvalid')

    await page.getByTestId('column-name').fill('Gate')
    await page.getByTestId('column-url').fill(`${speaker.url}/play`)
    await page.getByTestId('column-add').click()
    await page.getByRole('button', { name: 'Test Gate' }).waitFor()
    await page.getByRole('button', { name: 'Test Gate' }).click()
    await expect.poll(() => page.getByTestId('column-test').textContent()).toMatch(/^Reachable in \d+ ms · HTTP 200$/)
    await page.getByRole('button', { name: 'Play on Gate' }).click()
    await expect.poll(() => page.getByTestId('audio-notice').textContent()).toMatch(/^Played tone\.wav on Gate: .* sent, the column answered 200\.$/)
    const pushed = speaker.received.filter((r) => r.method === 'POST')
    expect(pushed).toHaveLength(1)
    expect(pushed[0]!.contentType).toBe('audio/mpeg')
    await screenshot('audio')

    await page.getByRole('link', { name: 'System' }).click()
    await page.getByRole('heading', { name: 'System', level: 1 }).waitFor()
    await page.getByTestId('time-zone').fill('Asia/Tokyo')
    await page.getByTestId('time-save').click()
    await expect.poll(() => page.getByTestId('time-notice').textContent()).toMatch(/^Saved: Asia\/Tokyo, local time .*\+09:00\.$/)
    expect((await query('/gtw/cwai/System/QueryTimeParam')).timeZone).toBe('Asia/Tokyo')

    await page.getByLabel('Detection overlays quality').fill('55')
    await page.getByLabel('Camera captures longest side').fill('800')
    await page.getByTestId('quality-save').click()
    await page.getByTestId('quality-notice').waitFor()
    expect(await query('/gtw/cwai/System/QueryImageQualityParam')).toEqual({ overlay: { quality: 55, maxSide: 0 }, snapshot: { quality: 80, maxSide: 0 }, capture: { quality: 85, maxSide: 800 } })

    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="48" height="24" onload="alert(1)"><script>alert(2)</script><rect width="48" height="24" fill="#0a7"/></svg>'
    await page.getByTestId('logo-file').setInputFiles({ name: 'logo.svg', mimeType: 'image/svg+xml', buffer: Buffer.from(svg) })
    await page.getByTestId('logo-upload').click()
    await expect.poll(() => page.getByTestId('logo-notice').textContent()).toBe('Logo saved. Removed from the SVG: onload, <script>.')
    // The header took the new logo: 48 px wide as drawn from the sanitised SVG.
    await expect.poll(() => page.getByTestId('brand-logo').evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(48)
    expect(await page.getByTestId('logo-info').textContent()).toMatch(/^Uploaded · image\/svg\+xml · 48×24/)
    await page.getByTestId('logo-reset').click()
    await expect.poll(() => page.getByTestId('logo-info').textContent()).toMatch(/^Default/)
    expect((await query('/gtw/cwai/System/QueryLogo')).custom).toBe(false)

    await page.getByTestId('debug-areas').getByLabel('audio').check()
    await page.getByTestId('debug-level').selectOption('warn')
    await page.getByTestId('debug-save').click()
    await page.getByTestId('debug-notice').waitFor()
    const debug = await query('/gtw/cwai/System/QueryDebugParam')
    expect(debug.logLevel).toBe('warn')
    expect(debug.areas).toContainEqual({ name: 'audio', debug: true })
    await page.getByTestId('log-files').getByRole('button').first().waitFor()
    await screenshot('system')

    expect(foreignRequests).toEqual([])
    expect(pageErrors).toEqual([])
  })
})
