/**
 * The console's Fleet view (docs/deployment.md "Fleet view") in real Chromium: three devices on
 * loopback with one mosquitto, the view on the first. It lists the three with their status, shows
 * a stopped one offline within the documented time, and pushes a setting to two with each
 * device's result beside it (and each device's own refusal for a bad value).
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser } from 'playwright-core'
import { DeviceClient } from '../../runtime/client/client.ts'
import { uploadFile, type ResumeRecord } from '../../runtime/client/upload.ts'
import { launchBrowser, openConsole, signIn, ready } from '../helpers/browser.ts'
import { CHANGED_PASSWORD, startDevice, type DeviceProcess } from '../helpers/device.ts'
import { zipOf } from '../helpers/zip.ts'
import { startBroker, type Broker } from '../helpers/mosquitto.ts'
import { seriousViolations } from '../helpers/axe.ts'

const IDS = ['fleet-a', 'fleet-b', 'fleet-c']
const root = path.resolve(import.meta.dirname, '../..')

/** An algorithm package of one algorithm: the face detector's manifest under another id (as the CLI's fleet test). */
const algorithmPackage = (version: string, algorithmName: string) => zipOf({ 'manifest.json': JSON.stringify({
  ...JSON.parse(readFileSync(path.join(root, 'models/manifests/face-detection.json'), 'utf8')), algorithmId: 'fleet-faces', algorithmName, version,
}) })

/** The algorithms a device installed from packages, read through its own API. */
const packaged = async (device: DeviceProcess, mtk: string) => ((await device.post('/gtw/cwai/algorithm/layout/list', { origin: 'package' }, mtk)).body.resData.rows as { algorithmId: string; algorithmName: string; version: string }[])
  .map((a) => [a.algorithmId, a.algorithmName, a.version])

/** Installs a package on one device through its own HTTP interface (upload of purpose algorithm, Algorithm/upload). */
async function installDirectly(device: DeviceProcess, bytes: Buffer) {
  const client = new DeviceClient({ baseUrl: device.url })
  await client.login('admin', CHANGED_PASSWORD)
  const records = new Map<string, ResumeRecord>()
  const store = { load: async (k: string) => records.get(k) ?? null, save: async (k: string, r: ResumeRecord) => { records.set(k, r) }, remove: async (k: string) => { records.delete(k) } }
  const blob = new Blob([new Uint8Array(bytes)])
  const { uploadId } = await uploadFile(client, { name: 'fleet-faces.zip', size: bytes.length, slice: (a, b) => blob.slice(a, b) }, { purpose: 'algorithm', resumeKey: 'direct', store })
  return client.algorithmUpload({ uploadId, replace: false })
}

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
    // Fleet/push: the package must be an upload of this session; the password travels as its digest only.
    const push = async (body: unknown) => (await a!.post('/gtw/cwai/Fleet/push', body, tokens[0]))
    const pushBody = { uploadId: 'no-such-upload', kind: 'algorithm', deviceIds: ['fleet-b'], account: 'admin', pwd: 'a'.repeat(32) }
    expect((await push({ ...pushBody, pwd: 'plain-text' })).body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/pwd' } })
    expect((await push({ ...pushBody, kind: 'firmware' })).body.resMsg[0].messageKey).toBe('api.error.InvalidParam')
    expect((await push({ ...pushBody, url: 'http://169.254.169.254' })).body.resMsg[0].messageKey).toBe('api.error.InvalidParam')
    expect((await push(pushBody)).body.resMsg[0].messageKey).toBe('api.error.uploadNotFound')
    const unknown = await a!.post('/gtw/cwai/Fleet/pushStatus', { pushId: 'nope' }, tokens[0])
    expect([unknown.status, unknown.body.resMsg[0].messageKey]).toEqual([404, 'api.error.FleetPushNotFound'])
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

  it('pushes an algorithm package chosen in the browser to two devices: installed on one, the other\'s own refusal beside it', { timeout: 240_000 }, async () => {
    const [a, b] = devices as [DeviceProcess, DeviceProcess]
    // fleet-b has the algorithm already (another version): it refuses the package without "replace".
    await installDirectly(b, await algorithmPackage('0.9.0', 'Fleet faces (old)'))
    expect(await packaged(a, tokens[0]!)).toEqual([])
    expect(await packaged(b, tokens[1]!)).toEqual([['fleet-faces', 'Fleet faces (old)', '0.9.0']])
    const bytes = await algorithmPackage('2.0.0', 'Fleet faces')

    const { page, foreignRequests, pageErrors, screenshot, context } = await openConsole(browser, a.url, 1440)
    await signIn(page, a.url, '#/fleet')
    await ready(page, 'Fleet')
    for (const id of ['fleet-a', 'fleet-b']) await expect.poll(() => page.getByTestId(`device-${id}`).getAttribute('data-state'), { timeout: 30_000 }).toBe('online')
    await page.getByLabel('Select fleet-a').check()
    await page.getByLabel('Select fleet-b').check()
    // fleet-c was stopped by the test before: it is reported, not contacted.
    await page.getByLabel('Select fleet-c').check()
    await page.getByLabel('Package kind').selectOption('algorithm')
    await page.getByLabel('Package file').setInputFiles({ name: 'fleet-faces.zip', mimeType: 'application/zip', buffer: bytes })
    await page.getByLabel('Password on the devices').fill(CHANGED_PASSWORD)
    await page.getByRole('button', { name: 'Push to 3 device(s)' }).click()
    await expect.poll(() => page.getByTestId('push-results').getAttribute('data-finished'), { timeout: 120_000 }).toBe('yes')

    const rowA = page.getByTestId('push-fleet-a')
    expect([await rowA.getAttribute('data-phase'), await rowA.getAttribute('data-outcome')]).toEqual(['done', 'installed'])
    expect(await rowA.textContent()).toContain('fleet-faces 2.0.0')
    const rowB = page.getByTestId('push-fleet-b')
    expect([await rowB.getAttribute('data-phase'), await rowB.getAttribute('data-outcome')]).toEqual(['failed', 'api.error.AlgorithmExists'])
    // The device's own text beside its key.
    expect(await rowB.locator('[data-state="refused"]').textContent()).toContain('api.error.AlgorithmExists An algorithm with this id already exists')
    expect([await page.getByTestId('push-fleet-c').getAttribute('data-outcome')]).toEqual(['offline'])
    await screenshot('fleet-push-algorithm')

    // Each device's own API: a has the new package, b kept its version.
    expect(await packaged(a, tokens[0]!)).toEqual([['fleet-faces', 'Fleet faces', '2.0.0']])
    expect(await packaged(b, tokens[1]!)).toEqual([['fleet-faces', 'Fleet faces (old)', '0.9.0']])
    // The push as the API tells it: the upload reached 100 % on both devices contacted, none on the offline one.
    const pushId = await page.getByTestId('push-results').getAttribute('data-push-id')
    const status = (await a.post('/gtw/cwai/Fleet/pushStatus', { pushId }, tokens[0])).body.resData
    expect(status).toMatchObject({ kind: 'algorithm', fileName: 'fleet-faces.zip', size: bytes.length })
    expect(status.rows.map((r: any) => [r.deviceId, r.phase, r.percent, r.ok, r.outcome])).toEqual([
      ['fleet-a', 'done', 100, true, 'installed'], ['fleet-b', 'failed', 100, false, 'api.error.AlgorithmExists'], ['fleet-c', 'failed', null, false, 'offline']])
    expect(keysOf(status).filter((k) => /password|pwd|secret|mtk|token/i.test(k))).toEqual([])

    // A wrong password: each device's own sign-in refusal, nothing installed.
    await page.getByLabel('Select fleet-c').uncheck()
    await page.getByLabel('Password on the devices').fill('not-the-password')
    await page.getByLabel('Replace algorithms that exist already').check()
    await page.getByRole('button', { name: 'Push to 2 device(s)' }).click()
    await expect.poll(() => page.getByTestId('push-results').getAttribute('data-finished'), { timeout: 60_000 }).toBe('yes')
    const refusedKeys = await Promise.all(['fleet-a', 'fleet-b'].map((id) => page.getByTestId(`push-${id}`).getAttribute('data-outcome')))
    const login = await b.post('/gtw/cwai/login/DoLogin', { account: 'admin', pwd: 'f'.repeat(32) })
    expect(refusedKeys).toEqual([login.body.resMsg[0].messageKey, login.body.resMsg[0].messageKey])
    expect(await packaged(b, tokens[1]!)).toEqual([['fleet-faces', 'Fleet faces (old)', '0.9.0']])

    expect(foreignRequests).toEqual([])
    expect(pageErrors).toEqual([])
    await context.close()
  })
})
