import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDevice, type DeviceProcess } from '../helpers/device.ts'
import { buildRelease, PRODUCT } from '../helpers/release-package.ts'
import { writePackage } from '../helpers/tarball.ts'
import { uploadFile } from '../helpers/upload-file.ts'
import { stageUpgrade } from '../../runtime/upgrade/stage.ts'

const root = path.resolve(import.meta.dirname, '../..')
const baseVersion = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version

async function waitFor<T>(probe: () => Promise<T | null> | T | null, what: string, timeoutMs = 60_000): Promise<T> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== null) return value
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

describe('software upgrade through the supervisor (npm start)', () => {
  let device: DeviceProcess
  let workDir: string
  let mtk: string
  beforeAll(async () => {
    workDir = mkdtempSync(path.join(tmpdir(), 'upgrade-int-'))
    device = await startDevice({ entry: 'supervisor', env: { UPGRADE_PROBATION_MS: '30000' } })
    mtk = await device.adminToken()
  })
  afterAll(async () => {
    await device.stop()
    device.cleanup()
    rmSync(workDir, { recursive: true, force: true })
  })

  const status = async () => (await device.post('/gtw/cwai/System/QueryDeviceStatus', {}, mtk)).body.resData
  const listeningCount = () => device.logs.filter((l) => l.msg === 'listening').length
  /** Uploads the package (purpose upgrade), calls Upgrade and waits for the restarted device. */
  async function upgradeTo(release: { file: string; name: string }, fromVersion: string, expectedVersion: string) {
    const uploadId = await uploadFile(device, mtk, readFileSync(release.file), release.name, 'upgrade')
    const before = listeningCount()
    const answer = await device.post('/gtw/cwai/System/Upgrade', { uploadId }, mtk)
    expect(answer.body).toMatchObject({ resCode: 1, resData: { version: expectedVersion, fromVersion, restarting: true } })
    await waitFor(() => (listeningCount() > before ? true : null), 'the device to listen again')
  }

  it('runs supervised: the base version answers and says so', async () => {
    const first = await status()
    expect(first).toMatchObject({ softwareVersion: baseVersion, supervised: true, pendingUpgrade: null })
  })

  it('refuses unsafe or misnamed packages through the API before anything is staged', async () => {
    const traversal = writePackage(workDir, { version: '5.0.0', extra: [{ path: '../evil.sh', data: 'rm -rf /' }] })
    const cases: [string, Buffer, string][] = [
      [traversal.name, traversal.bytes, 'api.error.upgradeUnsafePath'],
      ['EdgeAIDevice-5.0.0.tar.gz', traversal.bytes, 'api.error.upgradeBadFilename'],
      [`EdgeAIDevice-V5.0.0-${'0'.repeat(32)}.tar.gz`, traversal.bytes, 'api.error.upgradeMd5Mismatch'],
    ]
    for (const [name, bytes, key] of cases) {
      const uploadId = await uploadFile(device, mtk, bytes, name, 'upgrade')
      const answer = await device.post('/gtw/cwai/System/Upgrade', { uploadId }, mtk)
      expect(answer.body.resMsg[0], name).toMatchObject({ messageKey: key })
    }
    const state = (await device.post('/gtw/cwai/System/UpgradeStatus', {}, mtk)).body.resData
    expect(state).toMatchObject({ softwareVersion: baseVersion, pending: null, history: [] })
    expect(existsSync(path.join(device.dataDir, 'upgrade', 'staging')) ? readdirSync(path.join(device.dataDir, 'upgrade', 'staging')) : []).toEqual([])
  })

  it('uploads, validates, stages, restarts and installs the new version; bootId changes (a new boot of the device, spec 4.11), osBootId does not', async () => {
    const before = await status()
    const release = await buildRelease(workDir, '9.8.7')
    await upgradeTo(release, baseVersion, '9.8.7')
    const after = await status()
    expect(after.softwareVersion).toBe('9.8.7')
    expect(after.bootId).not.toBe(before.bootId)
    expect(after.osBootId).toBe(before.osBootId)
    expect(after.lastUpgrade).toMatchObject({ version: '9.8.7', fromVersion: baseVersion, outcome: 'installed', reason: null })
    expect(after.pendingUpgrade).toBeNull()
    const upgrade = (await device.post('/gtw/cwai/System/UpgradeStatus', {}, mtk)).body.resData
    expect(upgrade).toMatchObject({ softwareVersion: '9.8.7', current: { version: '9.8.7', base: false }, previous: { version: baseVersion, base: true }, pending: null })
    // The staged copy and the kept package are gone once installed.
    expect(readdirSync(path.join(device.dataDir, 'upgrade', 'staging'))).toEqual([])
    expect(readdirSync(path.join(device.dataDir, 'upgrade', 'packages'))).toEqual([])
    expect(statSync(path.join(device.dataDir, 'releases', '9.8.7', 'manifest.json')).isFile()).toBe(true)
    const events = (await device.post('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 10, kinds: ['upgrade.staged', 'upgrade.finished'] }, mtk)).body.resData
    expect(events.rows.map((r: any) => [r.kind, r.payload])).toEqual([
      ['upgrade.finished', { version: '9.8.7', fromVersion: baseVersion, outcome: 'installed', reason: null, softwareVersion: '9.8.7' }],
      ['upgrade.staged', { version: '9.8.7', fromVersion: baseVersion, requestedBy: 'admin' }],
    ])
  })

  it('rolls back to the running version when the new one does not start, and records why', async () => {
    const release = await buildRelease(workDir, '9.9.0', true)
    await upgradeTo(release, '9.8.7', '9.9.0')
    const after = await status()
    expect(after.softwareVersion).toBe('9.8.7')
    expect(after.lastUpgrade).toMatchObject({ version: '9.9.0', fromVersion: '9.8.7', outcome: 'rolled-back' })
    expect(after.lastUpgrade.reason).toBe('exited with code 3 before it was ready')
    const upgrade = (await device.post('/gtw/cwai/System/UpgradeStatus', {}, mtk)).body.resData
    expect(upgrade.current).toMatchObject({ version: '9.8.7' })
    expect(upgrade.history.map((h: any) => [h.version, h.outcome])).toEqual([['9.9.0', 'rolled-back'], ['9.8.7', 'installed']])
    expect(readdirSync(path.join(device.dataDir, 'releases'))).toEqual(['9.8.7'])
    const finished = (await device.post('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 1, kinds: ['upgrade.finished'] }, mtk)).body.resData.rows[0]
    expect(finished.payload).toMatchObject({ version: '9.9.0', outcome: 'rolled-back', softwareVersion: '9.8.7' })
  })

  it('refuses at start-up a kept package whose MD5 changed after staging, and keeps running the current version', async () => {
    const release = await buildRelease(workDir, '9.9.1')
    const pending = await stageUpgrade({
      dataPath: device.dataDir, file: release.file, take: 'copy', originalFilename: release.name, product: PRODUCT,
      limits: { maxEntries: 20_000, maxExpandedBytes: 1024 * 1024 * 1024 }, runningVersion: '9.8.7', requestedBy: 'admin', now: Date.now(),
    })
    // Tamper with the kept package between staging and restart.
    writeFileSync(pending.packageFile, Buffer.concat([readFileSync(pending.packageFile), Buffer.from('x')]))
    const before = listeningCount()
    await device.post('/gtw/cwai/System/Restart', {}, mtk)
    await waitFor(() => (listeningCount() > before ? true : null), 'the device to listen again')
    const after = await status()
    expect(after.softwareVersion).toBe('9.8.7')
    expect(after.lastUpgrade).toMatchObject({ version: '9.9.1', outcome: 'refused' })
    expect(after.lastUpgrade.reason).toMatch(/api\.error\.upgradeMd5Mismatch/)
  })
})

describe('software upgrade at LOG_LEVEL=warn (no `listening` log line)', () => {
  const PROBATION_MS = 15_000
  let device: DeviceProcess
  let workDir: string
  beforeAll(async () => {
    workDir = mkdtempSync(path.join(tmpdir(), 'upgrade-warn-'))
    device = await startDevice({ entry: 'supervisor', env: { UPGRADE_PROBATION_MS: String(PROBATION_MS), LOG_LEVEL: 'warn' } })
  })
  afterAll(async () => {
    await device.stop()
    device.cleanup()
    rmSync(workDir, { recursive: true, force: true })
  })

  it('installs the new version instead of rolling it back: readiness does not depend on the log level', async () => {
    const mtk = await device.adminToken()
    const release = await buildRelease(workDir, '9.8.7')
    const uploadId = await uploadFile(device, mtk, readFileSync(release.file), release.name, 'upgrade')
    const answer = await device.post('/gtw/cwai/System/Upgrade', { uploadId }, mtk)
    expect(answer.body).toMatchObject({ resCode: 1, resData: { version: '9.8.7', fromVersion: baseVersion, restarting: true } })
    const statusOf = async () => (await device.post('/gtw/cwai/System/QueryDeviceStatus', {}, mtk).catch(() => null))?.body?.resData ?? null
    // The new version answers while still on probation; a missed readiness signal rolls it back when probation ends.
    await waitFor(async () => ((await statusOf())?.softwareVersion === '9.8.7' ? true : null), 'the new version to answer', 90_000)
    await new Promise((resolve) => setTimeout(resolve, PROBATION_MS + 2_000))
    const after = await waitFor(statusOf, 'the device after probation', 90_000)
    // The outcome first: a rollback shows its reason.
    expect(after.lastUpgrade).toMatchObject({ version: '9.8.7', fromVersion: baseVersion, outcome: 'installed', reason: null })
    expect(after.softwareVersion).toBe('9.8.7')
    expect(device.logs.filter((l) => l.msg === 'upgrade rolled back')).toEqual([])
    expect(device.logs.filter((l) => l.msg === 'listening')).toEqual([])
  }, 180_000)
})

describe('upgrade routes on an unsupervised device', () => {
  let device: DeviceProcess
  beforeAll(async () => { device = await startDevice() })
  afterAll(async () => {
    await device.stop()
    device.cleanup()
  })

  it('refuses Upgrade and Restart with upgradeNotSupervised, and bad input with InvalidParam', async () => {
    const mtk = await device.adminToken()
    for (const route of ['/gtw/cwai/System/Upgrade', '/gtw/cwai/System/Restart']) {
      const body = route.endsWith('Upgrade') ? { uploadId: 'u-1' } : {}
      const answer = await device.post(route, body, mtk)
      expect(answer.body.resMsg[0], route).toMatchObject({ messageKey: 'api.error.upgradeNotSupervised', recommendedAction: 'CHANGE_DEPLOYMENT_POLICY' })
    }
    const bad = await device.post('/gtw/cwai/System/Upgrade', { uploadId: 7 }, mtk)
    expect(bad.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/uploadId' } })
    const missing = await device.post('/gtw/cwai/System/Upgrade', {}, mtk)
    expect(missing.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/uploadId' } })
    const state = (await device.post('/gtw/cwai/System/UpgradeStatus', {}, mtk)).body.resData
    expect(state).toMatchObject({ supervised: false, current: null, pending: null, history: [] })
  })
})
