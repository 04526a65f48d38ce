/**
 * Upgrade rollback and power cuts on the real supervisor (docs/system.md "Rollback and power
 * cuts"): a new version that crashes at start, never signals readiness, or signals it but never
 * answers `Probe` is rolled back within UPGRADE_PROBATION_MS; a SIGKILL of the whole process
 * group at each install step (the test-only UPGRADE_TEST_KILL_AT) leaves, once the supervisor
 * starts again, either the old version with the upgrade recorded as refused or rolled back, or
 * the new version fully installed. Every time the device answers with a new bootId and its
 * data (database rows, a face gallery with its picture, a recorded clip, settings) unchanged.
 *
 * One seeded device runs the rollbacks; each kill runs on a copy of its stopped data folder.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stageUpgrade } from '../../runtime/upgrade/stage.ts'
import { closedPort, startDevice, type DeviceProcess } from '../helpers/device.ts'
import { until } from '../helpers/processes.ts'
import { buildRelease, PRODUCT } from '../helpers/release-package.ts'
import { brokenPackage, copyDataDir, FAILING_STARTS, processesOf, runUntilKilled, seedKeptData, SUPERVISOR_KILLS } from '../helpers/upgrade-kill.ts'
import { uploadFile } from '../helpers/upload-file.ts'

const root = path.resolve(import.meta.dirname, '../..')
const baseVersion: string = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version
const VIDEO = path.resolve(root, '../shared/media/one-by-one-person-detection.mp4')
const kernelBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
/** Short, so the "never ready" cases end soon; the real release's start needs far less (see the kill cases). */
const PROBATION_MS = 4_000
/** A real release on probation in the kill cases: it starts its sidecar and models. */
const RELEASE_PROBATION_MS = 60_000
/** How long the previous version may take to answer again once the rollback is decided (its own start, on a loaded 2-core machine). */
const START_BOUND_MS = 60_000
/** The supervisor's own slack between the end of the probation and its decision. */
const DECISION_SLACK_MS = 1_500
const limits = { maxEntries: 20_000, maxExpandedBytes: 1024 * 1024 * 1024 }
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')

/** Every recorded clip file (`recordings/<camera>/`, not the ring of segments) with its SHA-256; the database is compared through the routes. */
function userFiles(dataDir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory() && entry.name !== 'ring') walk(full)
      else if (entry.isFile()) out[path.relative(dataDir, full)] = sha256(readFileSync(full))
    }
  }
  if (existsSync(path.join(dataDir, 'recordings'))) walk(path.join(dataDir, 'recordings'))
  return out
}

/** What must survive: the rows behind these answers and the files behind them. */
async function dataOf(device: DeviceProcess, mtk: string) {
  const ok = async (route: string, body: unknown) => {
    const answer = (await device.post(route, body, mtk)).body
    expect(answer.resCode, `${route}: ${JSON.stringify(answer.resMsg)}`).toBe(1)
    return answer.resData
  }
  const cameras = (await ok('/gtw/cwai/Camera/page', {})).rows.map((c: any) => ({ cameraId: c.cameraId, cameraName: c.cameraName, sourceType: c.sourceType }))
  const record = await ok('/gtw/cwai/System/QueryRecordParam', {})
  const person = await ok('/gtw/cwai/Library/PersonDetail', { galleryId: 'staff', personId: 'ada' })
  const pictures: Record<string, string> = {}
  for (const faceId of person.faceIds) {
    const response = await fetch(`${device.url}/gtw/cwai/Library/FacePicture?faceId=${faceId}`, { headers: { mtk } })
    expect(response.status).toBe(200)
    pictures[faceId] = sha256(Buffer.from(await response.arrayBuffer()))
  }
  return {
    galleries: await ok('/gtw/cwai/Library/LibraryPage', {}),
    persons: await ok('/gtw/cwai/Library/PersonPage', { galleryId: 'staff' }),
    person,
    pictures,
    clips: await ok('/gtw/cwai/System/RecordClipPage', { pageSize: 100 }),
    recordModes: record.cameras.map((c: any) => ({ cameraId: c.cameraId, mode: c.mode })),
    http: await ok('/gtw/cwai/System/QueryHttpParam', {}),
    cameras,
    files: userFiles(device.dataDir),
  }
}

describe('upgrade rollback and power cuts on the supervised device', () => {
  let workDir: string
  let device: DeviceProcess
  let mtk: string
  let golden: Awaited<ReturnType<typeof dataOf>>
  let release: { file: string; name: string }
  /** The bootId of the seeded device's last start: every start after it must have another. */
  let lastBootId: string
  const releaseVersion = '9.1.0'
  const status = async (d: DeviceProcess, token: string) => (await d.post('/gtw/cwai/System/QueryDeviceStatus', {}, token)).body.resData
  const upgradeStatus = async (d: DeviceProcess, token: string) => (await d.post('/gtw/cwai/System/UpgradeStatus', {}, token)).body.resData
  const listening = (d: DeviceProcess) => d.logs.filter((l) => l.msg === 'listening').length

  beforeAll(async () => {
    workDir = mkdtempSync(path.join(tmpdir(), 'upgrade-rollback-'))
    device = await startDevice({ entry: 'supervisor', env: { UPGRADE_PROBATION_MS: String(PROBATION_MS), RECORD_SEGMENT_SECONDS: '2', RECORD_CONTINUOUS_CHUNK_SECONDS: '4', RECORD_CHECK_INTERVAL_MS: '500' } })
    mtk = await device.adminToken()
    const ok = async (route: string, body: unknown) => {
      const answer = (await device.post(route, body, mtk)).body
      expect(answer.resCode, `${route}: ${JSON.stringify(answer.resMsg)}`).toBe(1)
      return answer.resData
    }
    // Data of every kind the device keeps: a gallery with a picture, a camera recording a clip, settings.
    await seedKeptData(device, mtk)
    const video = await uploadFile(device, mtk, readFileSync(VIDEO), 'office.mp4', 'video')
    const { cameraId } = await ok('/gtw/cwai/Camera/add', { cameraName: 'office', sourceType: 'file', uploadId: video })
    await ok('/gtw/cwai/System/SetRecordParam', { cameras: [{ cameraId, mode: 'continuous' }] })
    await until(async () => (await ok('/gtw/cwai/System/RecordClipPage', { kind: 'continuous', pageSize: 10 })).rows.length > 0, 'a recorded clip', 60_000)
    await ok('/gtw/cwai/System/SetRecordParam', { cameras: [{ cameraId, mode: 'off' }] })
    await until(async () => (await ok('/gtw/cwai/System/QueryRecordParam', {})).cameras[0].state !== 'recording', 'recording to stop', 30_000)
    golden = await dataOf(device, mtk)
    // The comparisons are of real data: one gallery with one picture, a clip with its file, the hook.
    expect(golden.person).toMatchObject({ personId: 'ada', name: 'Ada' })
    expect(Object.keys(golden.pictures)).toHaveLength(1)
    expect(golden.clips.rows.length).toBeGreaterThan(0)
    expect(Object.keys(golden.files).length).toBeGreaterThanOrEqual(golden.clips.rows.length)
    expect(golden.http).toMatchObject({ urls: ['http://127.0.0.1:9/hook'] })
    release = await buildRelease(workDir, releaseVersion)
  }, 240_000)
  afterAll(async () => {
    await device?.stop()
    device?.cleanup()
    rmSync(workDir, { recursive: true, force: true })
  })

  /**
   * Uploads a package, calls Upgrade, waits until the device answers again. Returns the
   * supervisor's figures: `decidedAfterMs` from the new version's start to the rollback, and
   * `startMs` from the rollback to the previous version listening again.
   */
  async function upgradeAndWait(pkg: { name: string; bytes: Buffer }, version: string) {
    const before = await status(device, mtk)
    const uploadId = await uploadFile(device, mtk, pkg.bytes, pkg.name, 'upgrade')
    const count = listening(device)
    const answer = await device.post('/gtw/cwai/System/Upgrade', { uploadId }, mtk)
    expect(answer.body).toMatchObject({ resCode: 1, resData: { version, fromVersion: baseVersion, restarting: true } })
    await until(async () => listening(device) > count, 'the device to answer again', PROBATION_MS + START_BOUND_MS * 2)
      .catch((error) => { throw new Error(`${error.message}\n${device.logs.slice(-15).map((l) => JSON.stringify(l)).join('\n')}`) })
    const rolledBack = device.logs.filter((l) => l.msg === 'upgrade rolled back').at(-1)!
    const listened = device.logs.filter((l) => l.msg === 'listening').at(-1)!
    expect(rolledBack).toMatchObject({ version, restored: baseVersion })
    return { before, decidedAfterMs: Number(rolledBack.afterMs), startMs: Number(listened.time) - Number(rolledBack.time) }
  }

  async function expectRolledBack(version: string, before: { bootId: string }, reason: RegExp) {
    const after = await status(device, mtk)
    expect(after).toMatchObject({ softwareVersion: baseVersion, osBootId: kernelBootId, pendingUpgrade: null, lastUpgrade: { version, fromVersion: baseVersion, outcome: 'rolled-back' } })
    expect(after.bootId).not.toBe(before.bootId)
    const upgrade = await upgradeStatus(device, mtk)
    expect(upgrade).toMatchObject({ softwareVersion: baseVersion, current: null, previous: null, pending: null, probation: null })
    const [last] = upgrade.history
    expect(last).toMatchObject({ version, fromVersion: baseVersion, outcome: 'rolled-back' })
    expect(last.reason).toMatch(reason)
    // The times: staged, then the install began, then the rollback.
    expect(Number(last.stagedAt)).toBeLessThanOrEqual(Number(last.startedAt))
    expect(Number(last.startedAt)).toBeLessThanOrEqual(Number(last.at))
    expect(readdirSync(path.join(device.dataDir, 'releases'))).toEqual([])
    expect(existsSync(path.join(device.dataDir, 'upgrade', 'journal.json'))).toBe(false)
    expect(await dataOf(device, mtk)).toEqual(golden)
  }

  it('rolls back a version that crashes at start: the old version answers with a new bootId, the reason is recorded, no data is lost', async () => {
    const pkg = brokenPackage(workDir, '9.0.1', FAILING_STARTS.crash)
    const { before, decidedAfterMs, startMs } = await upgradeAndWait(pkg, '9.0.1')
    // A crash is decided at once, not at the end of the probation.
    expect(decidedAfterMs).toBeLessThan(PROBATION_MS)
    expect(startMs).toBeLessThan(START_BOUND_MS)
    await expectRolledBack('9.0.1', before, /^exited with code 3 before it was ready$/)
    const finished = (await device.post('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 1, kinds: ['upgrade.finished'] }, mtk)).body.resData.rows[0]
    expect(finished.payload).toMatchObject({ version: '9.0.1', outcome: 'rolled-back', softwareVersion: baseVersion })
  }, 120_000)

  it(`rolls back a version that runs but never signals readiness, ${PROBATION_MS} ms after its start`, async () => {
    const pkg = brokenPackage(workDir, '9.0.2', FAILING_STARTS.hang)
    const { before, decidedAfterMs, startMs } = await upgradeAndWait(pkg, '9.0.2')
    expect(decidedAfterMs).toBeGreaterThanOrEqual(PROBATION_MS)
    expect(decidedAfterMs).toBeLessThan(PROBATION_MS + DECISION_SLACK_MS)
    expect(startMs).toBeLessThan(START_BOUND_MS)
    await expectRolledBack('9.0.2', before, new RegExp(`^did not signal readiness and answer Probe within ${PROBATION_MS} ms$`))
  }, 120_000)

  it('rolls back a version that signals readiness but never answers Probe', async () => {
    const port = await closedPort()
    const pkg = brokenPackage(workDir, '9.0.3', FAILING_STARTS.silent(port))
    const { before, decidedAfterMs, startMs } = await upgradeAndWait(pkg, '9.0.3')
    expect(decidedAfterMs).toBeGreaterThanOrEqual(PROBATION_MS)
    expect(decidedAfterMs).toBeLessThan(PROBATION_MS + DECISION_SLACK_MS)
    expect(startMs).toBeLessThan(START_BOUND_MS)
    await expectRolledBack('9.0.3', before, new RegExp(`^did not signal readiness and answer Probe within ${PROBATION_MS} ms$`))
    const rolledBack = device.logs.filter((l) => l.msg === 'upgrade rolled back').map((l) => l.version)
    expect(rolledBack).toEqual(['9.0.1', '9.0.2', '9.0.3'])
    lastBootId = (await status(device, mtk)).bootId
    await device.stop()
  }, 120_000)

  // Each install step killed: the next start gives the new version fully installed or the old one with the outcome recorded.
  for (const { step, expected, broken } of SUPERVISOR_KILLS) {
    it(`SIGKILL of the process group at "${step}": the next start gives ${expected === 'installed' ? 'the new version fully installed' : 'the old version, the upgrade rolled back'}`, async () => {
      const dataDir = mkdtempSync(path.join(tmpdir(), `upgrade-kill-${step}-`))
      copyDataDir(device.dataDir, dataDir)
      try {
        const historyBefore = (JSON.parse(readFileSync(path.join(dataDir, 'upgrade', 'state.json'), 'utf8')).history as unknown[]).length
        const pkg = broken ? brokenPackage(workDir, '9.2.0', 'process.exit(4)\n') : release
        const version = broken ? '9.2.0' : releaseVersion
        await stageUpgrade({ dataPath: dataDir, file: pkg.file, take: 'copy', originalFilename: pkg.name, product: PRODUCT, limits, runningVersion: baseVersion, requestedBy: 'admin', now: Date.now() })
        const killed = await runUntilKilled(dataDir, step, { UPGRADE_PROBATION_MS: String(RELEASE_PROBATION_MS) })
        expect(killed).toMatchObject({ signal: 'SIGKILL', reached: true })
        // Nothing of the group runs on: supervisor, device and sidecar died together.
        expect(await until(async () => processesOf(dataDir).length === 0 || null, 'the killed group to be gone', 10_000)).toBe(true)

        const again = await startDevice({ entry: 'supervisor', dataDir, env: { UPGRADE_PROBATION_MS: String(RELEASE_PROBATION_MS) } })
        try {
          const token = await again.adminToken()
          const after = await status(again, token)
          expect(after.bootId).not.toBe(lastBootId)
          expect(after.osBootId).toBe(kernelBootId)
          const upgrade = await upgradeStatus(again, token)
          expect(upgrade.history.length).toBe(historyBefore + 1)
          if (expected === 'installed') {
            expect(after).toMatchObject({ softwareVersion: version, pendingUpgrade: null, lastUpgrade: { version, fromVersion: baseVersion, outcome: 'installed', reason: null } })
            await until(async () => again.logs.some((l) => l.msg === 'upgrade probation passed') || null, 'the probation to pass', RELEASE_PROBATION_MS)
            expect(await upgradeStatus(again, token)).toMatchObject({ current: { version, base: false }, previous: { version: baseVersion, base: true }, pending: null, probation: null })
            // The whole tree, every file as its manifest says.
            expect(readdirSync(path.join(dataDir, 'releases'))).toEqual([version])
            const manifest = JSON.parse(readFileSync(path.join(dataDir, 'releases', version, 'manifest.json'), 'utf8'))
            for (const [file, digest] of Object.entries(manifest.files)) expect(sha256(readFileSync(path.join(dataDir, 'releases', version, file))), file).toBe(digest)
          } else {
            expect(after).toMatchObject({ softwareVersion: baseVersion, pendingUpgrade: null, lastUpgrade: { version, fromVersion: baseVersion, outcome: 'rolled-back', reason: 'exited with code 4 before it was ready' } })
            expect(await upgradeStatus(again, token)).toMatchObject({ current: null, pending: null, probation: null })
            expect(readdirSync(path.join(dataDir, 'releases'))).toEqual([])
          }
          // Nothing half-done stays: no staged copy, no kept package, no journal, no temporary record.
          expect(readdirSync(path.join(dataDir, 'upgrade', 'staging'))).toEqual([])
          expect(readdirSync(path.join(dataDir, 'upgrade', 'packages'))).toEqual([])
          expect(readdirSync(path.join(dataDir, 'upgrade')).sort()).toEqual(['packages', 'staging', 'state.json'])
          expect(await dataOf(again, token)).toEqual(golden)
        } finally {
          await again.stop()
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true })
      }
    }, 240_000)
  }

  it('SIGKILL of the process group while the device stages the package ("stage", "staged"): the next start gives the old version untouched, or the new one installed', async () => {
    for (const [step, expected] of [['stage', baseVersion], ['staged', releaseVersion]] as const) {
      const dataDir = mkdtempSync(path.join(tmpdir(), `upgrade-kill-${step}-`))
      copyDataDir(device.dataDir, dataDir)
      try {
        const doomed = await startDevice({ entry: 'supervisor', dataDir, detached: true, env: { UPGRADE_TEST_KILL_AT: step } })
        const token = await doomed.adminToken()
        const uploadId = await uploadFile(doomed, token, readFileSync(release.file), release.name, 'upgrade')
        // The device dies inside the request: the client gets no answer.
        await expect(doomed.post('/gtw/cwai/System/Upgrade', { uploadId }, token)).rejects.toThrow()
        // The socket can close before the supervisor's exit is reported: wait for that exit.
        if (doomed.process.exitCode === null && doomed.process.signalCode === null) await new Promise((resolve) => doomed.process.once('exit', resolve))
        expect(doomed.process.signalCode).toBe('SIGKILL')
        expect(await until(async () => processesOf(dataDir).length === 0 || null, 'the killed group to be gone', 10_000)).toBe(true)
        const again = await startDevice({ entry: 'supervisor', dataDir, env: { UPGRADE_PROBATION_MS: String(RELEASE_PROBATION_MS) } })
        try {
          const after = await status(again, await again.adminToken())
          expect(after, step).toMatchObject({ softwareVersion: expected, pendingUpgrade: null })
          expect(after.bootId).not.toBe(lastBootId)
          expect(readdirSync(path.join(dataDir, 'upgrade', 'staging'))).toEqual([])
          expect(readdirSync(path.join(dataDir, 'upgrade', 'packages'))).toEqual([])
          expect(readdirSync(path.join(dataDir, 'releases'))).toEqual(expected === baseVersion ? [] : [releaseVersion])
          expect(await dataOf(again, await again.adminToken())).toEqual(golden)
        } finally {
          await again.stop()
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true })
      }
    }
  }, 300_000)
})
