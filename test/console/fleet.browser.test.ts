/**
 * The console's Fleet view (docs/deployment.md "Fleet view") in real Chromium: three devices on
 * loopback with one mosquitto, the view on the first. It lists the three with their status, shows
 * a stopped one offline within the documented time, and pushes a setting to two with each
 * device's result beside it (and each device's own refusal for a bad value).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser } from 'playwright-core'
import { launchBrowser, openConsole, signIn, ready } from '../helpers/browser.ts'
import { startDevice, type DeviceProcess } from '../helpers/device.ts'
import { startBroker, type Broker } from '../helpers/mosquitto.ts'
import { seriousViolations } from '../helpers/axe.ts'

const IDS = ['fleet-a', 'fleet-b', 'fleet-c']

/** Every key of a JSON value, nested. */
const keysOf = (value: unknown): string[] => value && typeof value === 'object'
  ? Object.entries(value).flatMap(([k, v]) => [k, ...keysOf(v)]) : []

describe('console: Fleet view over three devices and one broker', () => {
  let broker: Broker
  let browser: Browser
  const devices: DeviceProcess[] = []
  const tokens: string[] = []

  beforeAll(async () => {
    broker = await startBroker()
    browser = await launchBrowser()
    // One after the other: three sidecars starting at once on two cores only slow each other.
    for (const id of IDS) {
      const device = await startDevice({ env: { MQTT_URL: broker.url, MQTT_CLIENT_ID: id, MQTT_SUMMARY_INTERVAL_MS: '1000' } })
      devices.push(device)
      tokens.push(await device.adminToken())
    }
  }, 300_000)
  afterAll(async () => {
    await browser?.close()
    for (const device of devices) {
      await device.stop()
      device.cleanup()
    }
    await broker?.cleanup()
  })

  it('is for signed-in sessions only, answers bad input with the field, and shows no credential', async () => {
    const [a] = devices
    const anonymous = await a!.post('/gtw/cwai/Fleet/list', {})
    expect(anonymous.status).toBe(401)
    expect(anonymous.body.resMsg[0].messageKey).toBe('api.error.Unauthorized')
    const refuse = async (body: unknown) => (await a!.post('/gtw/cwai/Fleet/call', body, tokens[0])).body.resMsg[0]
    expect(await refuse({ deviceIds: ['fleet-b'], path: '/gtw/cwai/Fleet/list' })).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/path' } })
    expect((await refuse({ deviceIds: [], path: '/gtw/cwai/System/QueryDeviceStatus' })).messageKey).toBe('api.error.InvalidParam')
    expect((await refuse({ deviceIds: ['a/#'], path: '/gtw/cwai/System/QueryDeviceStatus' })).messageKey).toBe('api.error.InvalidParam')
    expect((await refuse({ deviceIds: ['fleet-b'], path: 'no-slash' })).messageKey).toBe('api.error.InvalidParam')
    const list = (await a!.post('/gtw/cwai/Fleet/list', {}, tokens[0])).body.resData
    expect(keysOf(list).filter((k) => /password|secret|mtk|token|username/i.test(k))).toEqual([])
  })

  it('lists the three, shows a stopped one offline, pushes a setting to two with both results, and each device\'s refusal beside it', { timeout: 240_000 }, async () => {
    const [a, b, c] = devices as [DeviceProcess, DeviceProcess, DeviceProcess]
    const { page, foreignRequests, pageErrors, screenshot, context } = await openConsole(browser, a.url, 1440)
    await signIn(page, a.url, '#/fleet')
    await ready(page, 'Fleet')
    for (const id of IDS) await expect.poll(() => page.getByTestId(`device-${id}`).getAttribute('data-state'), { timeout: 30_000 }).toBe('online')
    // Each row has the device's summary: its cameras and tasks (none here), its version, a link to its console.
    const rowB = page.getByTestId('device-fleet-b')
    await expect.poll(() => rowB.textContent(), { timeout: 15_000 }).toContain('0 of 0 online')
    const version = (await b.post('/gtw/cwai/System/QueryDeviceStatus', {}, tokens[1])).body.resData.softwareVersion
    expect(await rowB.textContent()).toContain(version)
    expect(await rowB.getByRole('link', { name: 'Open console' }).getAttribute('href')).toBe(`${b.url.replace('localhost', '127.0.0.1')}/console/`)
    expect(await page.getByTestId('device-fleet-a').textContent()).toContain('(this device)')
    expect(await seriousViolations(page, 'the Fleet view')).toEqual([])
    await screenshot('fleet-list')

    // A device stopped: its status turns offline (a clean stop publishes it) and the view shows it within its refresh.
    const stoppedAt = Date.now()
    await c.stop()
    await expect.poll(() => page.getByTestId('device-fleet-c').getAttribute('data-state'), { timeout: 10_000, interval: 200 }).toBe('offline')
    const offlineAfterMs = Date.now() - stoppedAt
    expect(offlineAfterMs).toBeLessThan(2000 + 3000)

    // Push a setting to a and b.
    await page.getByLabel('Select fleet-a').check()
    await page.getByLabel('Select fleet-b').check()
    await page.getByLabel('Operation').selectOption({ label: 'Image quality (SetImageQualityParam)' })
    await page.getByLabel('Body (JSON)').fill('{"snapshot": {"quality": 77}}')
    await page.getByRole('button', { name: 'Run on 2 device(s)' }).click()
    for (const id of ['fleet-a', 'fleet-b']) await expect.poll(() => page.getByTestId(`result-${id}`).locator('[data-state]').getAttribute('data-state')).toBe('ok')
    for (const [device, mtk] of [[a, tokens[0]], [b, tokens[1]]] as const)
      expect((await device.post('/gtw/cwai/System/QueryImageQualityParam', {}, mtk)).body.resData.snapshot.quality).toBe(77)
    await screenshot('fleet-pushed')

    // A value each device refuses: its own error beside it, and nothing changes; the stopped device is not sent anything.
    await page.getByLabel('Select fleet-c').check()
    await page.getByLabel('Body (JSON)').fill('{"snapshot": {"quality": 500}}')
    await page.getByRole('button', { name: 'Run on 3 device(s)' }).click()
    for (const id of ['fleet-a', 'fleet-b']) {
      const result = page.getByTestId(`result-${id}`)
      await expect.poll(() => result.locator('[data-state]').getAttribute('data-state')).toBe('refused')
      expect(await result.textContent()).toContain('api.error.InvalidParam')
    }
    await expect.poll(() => page.getByTestId('result-fleet-c').locator('[data-state]').getAttribute('data-state')).toBe('offline')
    expect((await b.post('/gtw/cwai/System/QueryImageQualityParam', {}, tokens[1])).body.resData.snapshot.quality).toBe(77)
    // Not JSON: said before anything is sent.
    await page.getByLabel('Body (JSON)').fill('{"snapshot": ')
    await page.getByRole('button', { name: 'Run on 3 device(s)' }).click()
    await page.getByRole('alert').filter({ hasText: 'The body is not JSON' }).waitFor()

    // No credential of another device in the page.
    const text = await page.content()
    for (const mtk of tokens.slice(1)) expect(text).not.toContain(mtk)
    expect(foreignRequests).toEqual([])
    expect(pageErrors).toEqual([])
    await context.close()
  })
})
