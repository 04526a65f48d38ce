import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { endProbation, installPending, prepareStart, removeStrays, rollBack } from '../../runtime/upgrade/install.ts'
import { readJournal, writeJournal } from '../../runtime/upgrade/journal.ts'
import { stageUpgrade } from '../../runtime/upgrade/stage.ts'
import { readUpgradeState, releasesDir } from '../../runtime/upgrade/state.ts'
import { writePackage } from '../helpers/tarball.ts'

const PRODUCT = 'EdgeAIDevice'
const limits = { maxEntries: 100, maxExpandedBytes: 1024 * 1024 }

let dir: string
let data: string
let base: string
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'upgrade-install-'))
  data = path.join(dir, 'data')
  base = path.join(dir, 'base')
  mkdirSync(path.join(base, 'node_modules'), { recursive: true })
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

async function stageAndInstall(version: string, from: string, now: number) {
  const pkg = writePackage(dir, { version })
  await stageUpgrade({ dataPath: data, file: pkg.file, take: 'copy', originalFilename: pkg.name, product: PRODUCT, limits, runningVersion: from, requestedBy: null, now })
  return installPending(data, base, limits, now + 1)
}

describe('start-up install and rollback', () => {
  it('does nothing without a pending upgrade', async () => {
    expect(await installPending(data, base, limits, 1)).toEqual({ kind: 'none' })
  })

  it('installs into releases/<version>, links the base node_modules and keeps only current and previous releases', async () => {
    const first = await stageAndInstall('2.0.0', '1.0.0', 10)
    expect(first).toMatchObject({ kind: 'installed', release: { version: '2.0.0', entryPoint: 'dist/runtime/server.mjs' } })
    expect(existsSync(path.join(releasesDir(data), '2.0.0', 'node_modules'))).toBe(true)
    expect(readUpgradeState(data)).toMatchObject({ current: { version: '2.0.0' }, previous: { version: '1.0.0', dir: null }, pending: null })
    await stageAndInstall('3.0.0', '2.0.0', 20)
    await stageAndInstall('4.0.0', '3.0.0', 30)
    expect(readdirSync(releasesDir(data)).sort()).toEqual(['3.0.0', '4.0.0'])
    expect(readUpgradeState(data)).toMatchObject({ current: { version: '4.0.0' }, previous: { version: '3.0.0' } })
    expect(readUpgradeState(data).history.map((h) => [h.version, h.outcome])).toEqual([['2.0.0', 'installed'], ['3.0.0', 'installed'], ['4.0.0', 'installed']])
  })

  it('rolls back to the previous release, or to the base installation, recording the reason', async () => {
    await stageAndInstall('2.0.0', '1.0.0', 10)
    await stageAndInstall('3.0.0', '2.0.0', 20)
    const restored = await rollBack(data, 'did not listen', 30)
    expect(restored).toMatchObject({ version: '2.0.0' })
    expect(readdirSync(releasesDir(data))).toEqual(['2.0.0'])
    expect(readUpgradeState(data).history.at(-1)).toEqual({ version: '3.0.0', fromVersion: '2.0.0', outcome: 'rolled-back', reason: 'did not listen', at: 30, stagedAt: 20, startedAt: 21 })
    // With no previous release left, the base installation runs again.
    expect(await rollBack(data, 'crashed', 40)).toBeNull()
    expect(readUpgradeState(data).current).toBeNull()
  })

  it('refuses a kept package whose bytes changed since staging and keeps the current version', async () => {
    const pkg = writePackage(dir, { version: '2.0.0' })
    const pending = await stageUpgrade({ dataPath: data, file: pkg.file, take: 'copy', originalFilename: pkg.name, product: PRODUCT, limits, runningVersion: '1.0.0', requestedBy: null, now: 1 })
    writeFileSync(pending.packageFile, 'replaced')
    const outcome = await installPending(data, base, limits, 2)
    expect(outcome).toMatchObject({ kind: 'refused', version: '2.0.0' })
    expect(outcome.kind === 'refused' && outcome.reason).toMatch(/^api\.error\.upgradeMd5Mismatch/)
    expect(readUpgradeState(data)).toMatchObject({ current: null, pending: null })
    expect(existsSync(pending.stagingDir)).toBe(false)
    expect(existsSync(pending.packageFile)).toBe(false)
  })
})

describe('start after a power cut: the install journal (docs/system.md "Rollback and power cuts")', () => {
  async function stage(version: string, from: string, now: number) {
    const pkg = writePackage(dir, { version })
    return stageUpgrade({ dataPath: data, file: pkg.file, take: 'copy', originalFilename: pkg.name, product: PRODUCT, limits, runningVersion: from, requestedBy: null, now })
  }

  it('puts the first start of a new version on probation and ends it when told', async () => {
    await stage('2.0.0', '1.0.0', 10)
    expect(await prepareStart(data, base, limits, 11)).toMatchObject({ kind: 'probation', version: '2.0.0', start: 1, installed: { kind: 'installed' } })
    expect(readJournal(data)).toEqual({ version: '2.0.0', fromVersion: '1.0.0', phase: 'probation', installAttempts: 1, probationStarts: 1, startedAt: 11, stagedAt: 10 })
    endProbation(data)
    expect(readJournal(data)).toBeNull()
    expect(await prepareStart(data, base, limits, 12)).toEqual({ kind: 'normal', installed: { kind: 'none' } })
  })

  it('gives a version killed on probation one more start, then rolls it back with the reason', async () => {
    await stage('2.0.0', '1.0.0', 10)
    await prepareStart(data, base, limits, 11)
    // The supervisor was killed before the new version was ready: the next start finds the journal.
    expect(await prepareStart(data, base, limits, 20)).toMatchObject({ kind: 'probation', version: '2.0.0', start: 2 })
    const plan = await prepareStart(data, base, limits, 30)
    expect(plan).toMatchObject({ kind: 'rolled-back', version: '2.0.0', restored: null })
    expect(readUpgradeState(data)).toMatchObject({ current: null, previous: null, pending: null })
    expect(readUpgradeState(data).history.at(-1)).toMatchObject({ version: '2.0.0', fromVersion: '1.0.0', outcome: 'rolled-back', at: 30, stagedAt: 10, startedAt: 11 })
    expect(readUpgradeState(data).history.at(-1)!.reason).toMatch(/^started 2 times on probation and never became ready/)
    expect(readdirSync(releasesDir(data))).toEqual([])
    expect(readJournal(data)).toBeNull()
  })

  it('installs again after an interrupted install, and refuses the package after three interruptions', async () => {
    await stage('2.0.0', '1.0.0', 10)
    // An install that died half-way: its journal and a half-extracted release folder.
    writeJournal(data, { version: '2.0.0', fromVersion: '1.0.0', phase: 'install', installAttempts: 1, probationStarts: 0, startedAt: 11, stagedAt: 10 })
    mkdirSync(path.join(releasesDir(data), '2.0.0.installing', 'dist'), { recursive: true })
    expect(await prepareStart(data, base, limits, 12)).toMatchObject({ kind: 'probation', version: '2.0.0', installed: { kind: 'installed' } })
    expect(readdirSync(releasesDir(data))).toEqual(['2.0.0'])
    expect(readUpgradeState(data).history.at(-1)).toMatchObject({ version: '2.0.0', outcome: 'installed', startedAt: 11 })

    await stage('3.0.0', '2.0.0', 20)
    writeJournal(data, { version: '3.0.0', fromVersion: '2.0.0', phase: 'install', installAttempts: 3, probationStarts: 0, startedAt: 21, stagedAt: 20 })
    const plan = await prepareStart(data, base, limits, 22)
    expect(plan).toMatchObject({ kind: 'normal', installed: { kind: 'refused', version: '3.0.0', reason: 'the install was interrupted 3 times (power cut or kill); refused' } })
    expect(readUpgradeState(data)).toMatchObject({ current: { version: '2.0.0' }, pending: null })
    expect(readJournal(data)).toBeNull()
  })

  it('removes release folders, staged copies, kept packages and temporary records no record names', async () => {
    await stage('2.0.0', '1.0.0', 10)
    await installPending(data, base, limits, 11)
    mkdirSync(path.join(releasesDir(data), '9.9.9.installing'), { recursive: true })
    mkdirSync(path.join(releasesDir(data), '1.5.0'), { recursive: true })
    mkdirSync(path.join(data, 'upgrade', 'staging', '9.9.9'), { recursive: true })
    writeFileSync(path.join(data, 'upgrade', 'packages', 'EdgeAIDevice-V9.9.9-x.tar.gz'), 'half')
    writeFileSync(path.join(data, 'upgrade', 'state.json.123.tmp'), '{')
    expect((await removeStrays(data)).sort()).toEqual(['releases/1.5.0', 'releases/9.9.9.installing', 'upgrade/packages/EdgeAIDevice-V9.9.9-x.tar.gz', 'upgrade/staging/9.9.9', 'upgrade/state.json.123.tmp'])
    expect(readdirSync(releasesDir(data))).toEqual(['2.0.0'])
    expect(readUpgradeState(data).current).toMatchObject({ version: '2.0.0' })
  })
})
