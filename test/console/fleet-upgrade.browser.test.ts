/**
 * An upgrade pushed from the console's Fleet view (docs/deployment.md "Fleet view") in real
 * Chromium: the console runs on fleet-a, fleet-b and fleet-c run under the supervisor (npm
 * start) which an upgrade needs. The push is throttled (FLEET_PUSH_MAX_BYTES_PER_SECOND) so
 * that it outlasts the upload idle timeout of every device (shortened to 3 s): it still
 * completes, each device confirms the new softwareVersion through its own API, and no upload
 * session, reservation or staged file is left behind. While it runs, a third push is refused
 * with FleetPushBusy.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser } from 'playwright-core'
import { md5Hex } from '../../runtime/client/md5.ts'
import { launchBrowser, openConsole, signIn, ready } from '../helpers/browser.ts'
import { CHANGED_PASSWORD, startDevice, type DeviceProcess } from '../helpers/device.ts'
import { startBroker, type Broker } from '../helpers/mosquitto.ts'
import { buildRelease } from '../helpers/release-package.ts'
import { uploadFile } from '../helpers/upload-file.ts'
import { zipOf } from '../helpers/zip.ts'

const root = path.resolve(import.meta.dirname, '../..')
const baseVersion = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version as string
const IDS = ['fleet-a', 'fleet-b', 'fleet-c'] as const
const NEW_VERSION = '9.8.7'
const IDLE_MS = 3000
const RATE = 6_000_000
/** Every device: upload sessions idle for 3 s expire, and the sweeper (which also deletes forgotten claimed files) runs every 250 ms. */
const UPLOAD_ENV = { UPLOAD_IDLE_TIMEOUT_MS: String(IDLE_MS), UPLOAD_SWEEP_INTERVAL_MS: '250' }

describe('console: an upgrade pushed from the Fleet view to two supervised devices', () => {
  let broker: Broker
  let browser: Browser
  let work: string
  const devices = new Map<string, DeviceProcess>()
  const tokens = new Map<string, string>()

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'fleet-upgrade-'))
    broker = await startBroker()
    browser = await launchBrowser()
    for (const id of IDS) {
      const device = await startDevice({
        ...(id === 'fleet-a' ? {} : { entry: 'supervisor' as const }),
        env: {
          MQTT_URL: broker.url, MQTT_CLIENT_ID: id, MQTT_SUMMARY_INTERVAL_MS: '1000', UPGRADE_PROBATION_MS: '120000', ...UPLOAD_ENV,
          ...(id === 'fleet-a' ? { FLEET_PUSH_MAX_BYTES_PER_SECOND: String(RATE) } : {}),
        },
      })
      devices.set(id, device)
      tokens.set(id, await device.adminToken())
    }
  }, 300_000)
  afterAll(async () => {
    await browser?.close()
    for (const device of devices.values()) {
      await device.stop()
      device.cleanup()
    }
    await broker?.cleanup()
    if (work) rmSync(work, { recursive: true, force: true })
  })

  const post = (id: string, route: string, body: unknown = {}) => devices.get(id)!.post(route, body, tokens.get(id))
  const capabilities = async (id: string) => (await post(id, '/gtw/cwai/atomic/model/uploadCapabilities')).body.resData
  /** The staged upload files left in a device's data folder. */
  const staged = (id: string) => readdirSync(path.join(devices.get(id)!.dataDir, 'uploads'), { withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name)

  it('pushes the package chosen in the browser: per-device progress, restart, each device confirms the new version; a third push meanwhile is FleetPushBusy', { timeout: 420_000 }, async () => {
    const release = await buildRelease(work, NEW_VERSION)
    const size = readFileSync(release.file).length
    // At RATE bytes per second the upload to each device alone lasts longer than the idle timeout.
    expect(size / RATE * 1000).toBeGreaterThan(IDLE_MS * 1.5)
    for (const id of IDS) expect((await post(id, '/gtw/cwai/System/QueryDeviceStatus')).body.resData.softwareVersion).toBe(baseVersion)

    const a = devices.get('fleet-a')!
    const { page, foreignRequests, pageErrors, screenshot, context } = await openConsole(browser, a.url, 1440)
    await signIn(page, a.url, '#/fleet')
    await ready(page, 'Fleet')
    for (const id of IDS) await expect.poll(() => page.getByTestId(`device-${id}`).getAttribute('data-state'), { timeout: 30_000 }).toBe('online')
    await page.getByLabel('Select fleet-b').check()
    await page.getByLabel('Select fleet-c').check()
    await page.getByLabel('Package kind').selectOption('upgrade')
    await page.getByLabel('Package file').setInputFiles(release.file)
    await page.getByLabel('Password on the devices').fill(CHANGED_PASSWORD)
    await page.getByRole('button', { name: 'Push to 2 device(s)' }).click()

    // Each device's row as the page shows it, read until the push has finished.
    const seen = new Map<string, { phases: string[]; percents: number[] }>([['fleet-b', { phases: [], percents: [] }], ['fleet-c', { phases: [], percents: [] }]])
    const watch = async () => {
      const results = page.getByTestId('push-results')
      await results.waitFor({ timeout: 120_000 })
      for (;;) {
        // Read before the rows: once finished, the rows read next are the final ones.
        const finished = await results.getAttribute('data-finished') === 'yes'
        for (const [id, record] of seen) {
          const row = page.getByTestId(`push-${id}`)
          const phase = await row.getAttribute('data-phase')
          if (phase && record.phases.at(-1) !== phase) record.phases.push(phase)
          const percent = /Uploading (\d+) %/.exec(await row.textContent() ?? '')
          if (percent) record.percents.push(Number(percent[1]))
        }
        if (finished) return
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
    const watching = watch()
    // Awaited below; a failure before that must not leave it unhandled.
    watching.catch(() => {})

    // While the push uploads: a second push (an algorithm package, 16 MB so that it too takes seconds) runs, a third is refused.
    await expect.poll(async () => seen.get('fleet-b')!.phases.includes('uploading') && seen.get('fleet-c')!.phases.includes('uploading'), { timeout: 120_000, interval: 100 }).toBe(true)
    const manifest = { ...JSON.parse(readFileSync(path.join(root, 'models/manifests/face-detection.json'), 'utf8')), algorithmId: 'fleet-padded', algorithmName: 'Fleet padded', version: '1.0.0' }
    const padded = await zipOf({ 'manifest.json': JSON.stringify(manifest), 'files/pad.bin': randomBytes(16 * 1024 * 1024) })
    const pushBody = { kind: 'algorithm', deviceIds: ['fleet-a'], account: 'admin', pwd: md5Hex(CHANGED_PASSWORD) }
    const secondUpload = await uploadFile(a, tokens.get('fleet-a')!, padded, 'padded.zip', 'algorithm')
    const thirdUpload = await uploadFile(a, tokens.get('fleet-a')!, padded, 'padded.zip', 'algorithm')
    const second = await post('fleet-a', '/gtw/cwai/Fleet/push', { ...pushBody, uploadId: secondUpload })
    expect(second.body.resCode).toBe(1)
    const third = await post('fleet-a', '/gtw/cwai/Fleet/push', { ...pushBody, uploadId: thirdUpload })
    expect(third.status).toBe(429)
    expect(third.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.FleetPushBusy', details: { limit: 2 }, retryable: true, retryAfterSeconds: 10 })
    expect(third.body.resMsg[0].recommendedAction).toEqual(expect.any(String))
    expect(third.body.resMsg[0].recommendedAction.length).toBeGreaterThan(0)
    // Refused before its upload was consumed: the same uploadId is still complete, and pushed again once a push has ended.
    expect(staged('fleet-a')).toContain(thirdUpload)

    await watching
    const pushId = await page.getByTestId('push-results').getAttribute('data-push-id')
    const status = (await post('fleet-a', '/gtw/cwai/Fleet/pushStatus', { pushId })).body.resData
    // The push outlasted the upload idle timeout of every device.
    expect(Date.parse(status.finishedAt) - Date.parse(status.startedAt)).toBeGreaterThan(IDLE_MS)
    expect(status).toMatchObject({ kind: 'upgrade', fileName: release.name, size })
    expect(status.rows.map((r: any) => [r.deviceId, r.phase, r.percent, r.ok, r.outcome, r.error])).toEqual([
      ['fleet-b', 'done', 100, true, 'installed', null], ['fleet-c', 'done', 100, true, 'installed', null]])
    for (const id of ['fleet-b', 'fleet-c']) {
      const row = page.getByTestId(`push-${id}`)
      expect([await row.getAttribute('data-phase'), await row.getAttribute('data-outcome')]).toEqual(['done', 'installed'])
      expect(await row.textContent()).toContain(`Done (installed): ${baseVersion} → ${NEW_VERSION}`)
      // Progress as it happened: the upload in steps between 0 and 100 %, then the restart, in this order.
      const { phases, percents } = seen.get(id)!
      expect(phases.filter((p) => ['uploading', 'restarting', 'done'].includes(p))).toEqual(['uploading', 'restarting', 'done'])
      expect(percents.some((p) => p > 0 && p < 100)).toBe(true)
      // The device's own API (its HTTP server may still be starting when its registration is back): the new version runs, installed from the old one.
      await expect.poll(async () => (await post(id, '/gtw/cwai/System/QueryDeviceStatus').catch(() => null))?.body.resData, { timeout: 60_000 })
        .toMatchObject({ softwareVersion: NEW_VERSION, supervised: true, lastUpgrade: { version: NEW_VERSION, fromVersion: baseVersion, outcome: 'installed' } })
      // The push reported it once the probation of the new version had ended (docs/system.md "Rollback and power cuts").
      expect((await post(id, '/gtw/cwai/System/UpgradeStatus')).body.resData).toMatchObject({ softwareVersion: NEW_VERSION, probation: null })
    }
    // The list shows both at the new version, each with a link to its console once its registration names its address again.
    for (const id of ['fleet-b', 'fleet-c']) {
      const listed = page.getByTestId(`device-${id}`)
      await expect.poll(async () => (await listed.textContent())?.includes(NEW_VERSION) && await listed.getByRole('link', { name: 'Open console' }).count(), { timeout: 30_000 }).toBe(1)
    }
    await screenshot('fleet-push-upgrade')

    // The second push completed as well: the package is installed on fleet-a, as its own API says.
    await expect.poll(async () => (await post('fleet-a', '/gtw/cwai/Fleet/pushStatus', { pushId: second.body.resData.pushId })).body.resData, { timeout: 60_000 })
      .toMatchObject({ finishedAt: expect.any(String), rows: [{ deviceId: 'fleet-a', phase: 'done', ok: true, outcome: 'installed', percent: 100 }] })
    // The refused push's upload, sent again now that no push runs: accepted (replace: the same algorithm is installed already).
    const retried = await post('fleet-a', '/gtw/cwai/Fleet/push', { ...pushBody, replace: true, uploadId: thirdUpload })
    expect(retried.body.resMsg).toEqual([])
    await expect.poll(async () => (await post('fleet-a', '/gtw/cwai/Fleet/pushStatus', { pushId: retried.body.resData.pushId })).body.resData, { timeout: 60_000 })
      .toMatchObject({ finishedAt: expect.any(String), rows: [{ deviceId: 'fleet-a', phase: 'done', ok: true, outcome: 'installed', percent: 100 }] })
    const packaged = (await post('fleet-a', '/gtw/cwai/algorithm/layout/list', { origin: 'package' })).body.resData.rows.map((r: any) => [r.algorithmId, r.version])
    expect(packaged).toEqual([['fleet-padded', '1.0.0']])
    // Nothing left behind: no open session, no reservation, no staged file on any device (the console's claimed packages released).
    for (const id of IDS) {
      await expect.poll(async () => ({ ...(await capabilities(id)), staged: staged(id) }), { timeout: 10_000 })
        .toMatchObject({ activeSessions: 0, reservedBySessionsBytes: '0', staged: [] })
    }
    expect(foreignRequests).toEqual([])
    expect(pageErrors).toEqual([])
    await context.close()
  })
})
