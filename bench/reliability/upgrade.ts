import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { stageUpgrade } from '../../runtime/upgrade/stage.ts'
import { closedPort, startDevice, type DeviceProcess } from '../../test/helpers/device.ts'
import { buildRelease, PRODUCT } from '../../test/helpers/release-package.ts'
import { brokenPackage, copyDataDir, FAILING_STARTS, processesOf, runUntilKilled, seedKeptData, SUPERVISOR_KILLS } from '../../test/helpers/upgrade-kill.ts'
import { uploadFile } from '../../test/helpers/upload-file.ts'
import { ROOT, waitUntil } from './lib.ts'

/**
 * The reliability suite's `upgrade` part (docs/system.md "Rollback and power cuts"): a new
 * version that crashes at start, hangs, or never answers `Probe` must be rolled back; a SIGKILL
 * of the whole process group at each install step (test-only UPGRADE_TEST_KILL_AT) must leave,
 * after the next start, the old version with the outcome recorded or the new one fully
 * installed. Each case checks the version, the outcome, a new bootId, no half-installed tree
 * and the seeded data (a gallery person with a face picture, a webhook setting).
 */
const PROBATION_MS = 4_000
const RELEASE_PROBATION_MS = 60_000
const limits = { maxEntries: 20_000, maxExpandedBytes: 1024 * 1024 * 1024 }
const baseVersion: string = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')

export interface UpgradeCase {
  name: string
  expected: string
  softwareVersion: string | null
  outcome: string | null
  reason: string | null
  /** From the Upgrade answer (or the start after the kill) until the device answered again. */
  answeredAfterMs: number | null
  /** Rollbacks of a failing start, from the supervisor's log: its start to the decision, the decision to the previous version listening. */
  decidedAfterMs?: number
  previousStartMs?: number
  problems: string[]
}

export interface UpgradeFigures {
  cases: UpgradeCase[]
  lost: string[]
  violations: string[]
  durationMs: number
}

async function dataOf(device: DeviceProcess, mtk: string): Promise<string> {
  const call = async (route: string, body: unknown) => (await device.post(route, body, mtk)).body.resData
  const person = await call('/gtw/cwai/Library/PersonDetail', { galleryId: 'staff', personId: 'ada' })
  const pictures = []
  for (const faceId of person?.faceIds ?? []) {
    const response = await fetch(`${device.url}/gtw/cwai/Library/FacePicture?faceId=${faceId}`, { headers: { mtk } })
    pictures.push(sha256(Buffer.from(await response.arrayBuffer())))
  }
  return JSON.stringify({ person, pictures, http: await call('/gtw/cwai/System/QueryHttpParam', {}), galleries: await call('/gtw/cwai/Library/LibraryPage', {}) })
}

/** What is wrong on disk after a case: half-installed releases, leftovers, an open journal. */
function leftovers(dataDir: string, version: string | null): string[] {
  const problems: string[] = []
  const releases = existsSync(path.join(dataDir, 'releases')) ? readdirSync(path.join(dataDir, 'releases')) : []
  const expected = version && version !== baseVersion ? [version] : []
  if (JSON.stringify(releases) !== JSON.stringify(expected)) problems.push(`releases/ holds ${JSON.stringify(releases)}, expected ${JSON.stringify(expected)}`)
  if (version && version !== baseVersion) {
    const dir = path.join(dataDir, 'releases', version)
    const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { files: Record<string, string> }
    for (const [file, digest] of Object.entries(manifest.files)) {
      if (!existsSync(path.join(dir, file)) || sha256(readFileSync(path.join(dir, file))) !== digest) problems.push(`half-installed: ${file}`)
    }
  }
  for (const folder of ['staging', 'packages']) {
    const dir = path.join(dataDir, 'upgrade', folder)
    if (existsSync(dir) && readdirSync(dir).length) problems.push(`upgrade/${folder} not empty: ${readdirSync(dir).join(', ')}`)
  }
  if (existsSync(path.join(dataDir, 'upgrade', 'journal.json'))) problems.push('the install journal is still open')
  return problems
}

export async function runUpgradeFaults(options: { log: (line: string) => void }): Promise<UpgradeFigures> {
  const started = Date.now()
  const figures: UpgradeFigures = { cases: [], lost: [], violations: [], durationMs: 0 }
  const workDir = mkdtempSync(path.join(tmpdir(), 'reliability-upgrade-'))
  let device: DeviceProcess | null = null
  try {
    device = await startDevice({ entry: 'supervisor', env: { UPGRADE_PROBATION_MS: String(PROBATION_MS) } })
    const seeded = device
    const mtk = await seeded.adminToken()
    const ok = async (route: string, body: unknown) => {
      const answer = (await seeded.post(route, body, mtk)).body
      if (answer.resCode !== 1) throw new Error(`${route}: ${JSON.stringify(answer.resMsg)}`)
      return answer.resData
    }
    await seedKeptData(seeded, mtk)
    const golden = await dataOf(seeded, mtk)
    const seenBootIds = new Set<string>([(await ok('/gtw/cwai/System/QueryDeviceStatus', {})).bootId])

    const check = async (name: string, d: DeviceProcess, token: string, expected: string, expectedOutcome: string, answeredAfterMs: number | null) => {
      const status = (await d.post('/gtw/cwai/System/QueryDeviceStatus', {}, token)).body.resData
      const problems: string[] = []
      if (status.softwareVersion !== expected) problems.push(`softwareVersion ${status.softwareVersion}, expected ${expected}`)
      if (status.lastUpgrade?.outcome !== expectedOutcome) problems.push(`outcome ${status.lastUpgrade?.outcome}, expected ${expectedOutcome}`)
      if (seenBootIds.has(status.bootId)) problems.push('bootId did not change')
      seenBootIds.add(status.bootId)
      problems.push(...leftovers(d.dataDir, status.softwareVersion))
      if (await dataOf(d, token) !== golden) figures.lost.push(`${name}: the seeded data changed`)
      figures.cases.push({ name, expected, softwareVersion: status.softwareVersion, outcome: status.lastUpgrade?.outcome ?? null, reason: status.lastUpgrade?.reason ?? null, answeredAfterMs, problems })
      for (const problem of problems) figures.violations.push(`${name}: ${problem}`)
      options.log(`upgrade ${name}: ${status.softwareVersion} ${status.lastUpgrade?.outcome}${answeredAfterMs === null ? '' : ` after ${answeredAfterMs} ms`}${problems.length ? ` — ${problems.join('; ')}` : ''}`)
    }

    // A new version that does not start: rolled back within the probation.
    const silentPort = await closedPort()
    const failing: [string, string][] = [['crash at start', FAILING_STARTS.crash], ['never ready', FAILING_STARTS.hang], ['never answers Probe', FAILING_STARTS.silent(silentPort)]]
    let patch = 1
    for (const [name, script] of failing) {
      const pkg = brokenPackage(workDir, `9.0.${patch++}`, script)
      const uploadId = await uploadFile(seeded, mtk, pkg.bytes, pkg.name, 'upgrade')
      const count = seeded.logs.filter((l) => l.msg === 'listening').length
      const answer = await seeded.post('/gtw/cwai/System/Upgrade', { uploadId }, mtk)
      if (answer.body.resCode !== 1) throw new Error(`Upgrade refused: ${JSON.stringify(answer.body.resMsg)}`)
      const asked = Date.now()
      const back = await waitUntil(() => seeded.logs.filter((l) => l.msg === 'listening').length > count, PROBATION_MS + 60_000)
      if (!back) { figures.violations.push(`${name}: the device did not answer again`); continue }
      await check(name, seeded, mtk, baseVersion, 'rolled-back', Date.now() - asked)
      const decision = seeded.logs.filter((l) => l.msg === 'upgrade rolled back').at(-1)
      const listened = seeded.logs.filter((l) => l.msg === 'listening').at(-1)
      if (decision && listened) Object.assign(figures.cases.at(-1)!, { decidedAfterMs: Number(decision.afterMs), previousStartMs: Number(listened.time) - Number(decision.time) })
      options.log(`upgrade ${name}: decided ${decision?.afterMs} ms after the new version's start; the previous version listened ${Number(listened?.time) - Number(decision?.time)} ms later`)
    }
    await seeded.stop()

    // A power cut (SIGKILL of the process group) at each install step, on copies of the stopped data folder.
    const release = await buildRelease(workDir, '9.1.0')
    const broken = brokenPackage(workDir, '9.2.0', 'process.exit(4)\n')
    const kills = [...SUPERVISOR_KILLS.map((k) => ({ ...k, side: 'supervisor' as const })), { step: 'stage', expected: 'old' as const, side: 'device' as const }, { step: 'staged', expected: 'installed' as const, side: 'device' as const }]
    for (const kill of kills) {
      const dataDir = mkdtempSync(path.join(tmpdir(), `reliability-upgrade-${kill.step}-`))
      copyDataDir(seeded.dataDir, dataDir)
      try {
        const pkg = 'broken' in kill && kill.broken ? broken : release
        const version = pkg === broken ? '9.2.0' : '9.1.0'
        if (kill.side === 'supervisor') {
          await stageUpgrade({ dataPath: dataDir, file: pkg.file, take: 'copy', originalFilename: pkg.name, product: PRODUCT, limits, runningVersion: baseVersion, requestedBy: 'admin', now: Date.now() })
          const killed = await runUntilKilled(dataDir, kill.step, { UPGRADE_PROBATION_MS: String(RELEASE_PROBATION_MS) })
          if (killed.signal !== 'SIGKILL' || !killed.reached) figures.violations.push(`kill at ${kill.step}: the kill point was not reached (${killed.code}/${killed.signal})`)
        } else {
          const doomed = await startDevice({ entry: 'supervisor', dataDir, detached: true, env: { UPGRADE_TEST_KILL_AT: kill.step } })
          const token = await doomed.adminToken()
          const uploadId = await uploadFile(doomed, token, readFileSync(release.file), release.name, 'upgrade')
          await doomed.post('/gtw/cwai/System/Upgrade', { uploadId }, token).then(() => figures.violations.push(`kill at ${kill.step}: Upgrade answered`), () => {})
          await waitUntil(() => doomed.process.exitCode !== null || doomed.process.signalCode !== null, 10_000)
        }
        if (!await waitUntil(() => processesOf(dataDir).length === 0, 10_000)) figures.violations.push(`kill at ${kill.step}: processes outlived the group kill`)
        const restartedAt = Date.now()
        const again = await startDevice({ entry: 'supervisor', dataDir, env: { UPGRADE_PROBATION_MS: String(RELEASE_PROBATION_MS) } })
        try {
          const answeredAfterMs = Date.now() - restartedAt
          const token = await again.adminToken()
          if (kill.expected === 'installed') await waitUntil(() => again.logs.some((l) => l.msg === 'upgrade probation passed'), RELEASE_PROBATION_MS)
          if (kill.expected === 'old') {
            const status = (await again.post('/gtw/cwai/System/QueryDeviceStatus', {}, token)).body.resData
            const problems = [...(status.softwareVersion === baseVersion ? [] : [`softwareVersion ${status.softwareVersion}`]), ...(status.pendingUpgrade ? ['an upgrade is pending'] : []), ...leftovers(dataDir, status.softwareVersion)]
            if (seenBootIds.has(status.bootId)) problems.push('bootId did not change')
            seenBootIds.add(status.bootId)
            if (await dataOf(again, token) !== golden) figures.lost.push(`kill at ${kill.step}: the seeded data changed`)
            figures.cases.push({ name: `kill at ${kill.step}`, expected: baseVersion, softwareVersion: status.softwareVersion, outcome: null, reason: null, answeredAfterMs, problems })
            for (const problem of problems) figures.violations.push(`kill at ${kill.step}: ${problem}`)
            options.log(`upgrade kill at ${kill.step}: ${status.softwareVersion} (nothing recorded) after ${answeredAfterMs} ms${problems.length ? ` — ${problems.join('; ')}` : ''}`)
          } else {
            await check(`kill at ${kill.step}`, again, token, kill.expected === 'installed' ? version : baseVersion, kill.expected, answeredAfterMs)
          }
        } finally {
          await again.stop()
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true })
      }
    }
  } finally {
    if (device) {
      await device.stop()
      device.cleanup()
    }
    rmSync(workDir, { recursive: true, force: true })
  }
  figures.durationMs = Date.now() - started
  return figures
}
