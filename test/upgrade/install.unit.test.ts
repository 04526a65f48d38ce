import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { installPending, rollBack } from '../../shared/upgrade/install.ts'
import { stageUpgrade } from '../../shared/upgrade/stage.ts'
import { readUpgradeState, releasesDir } from '../../shared/upgrade/state.ts'
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
    expect(readUpgradeState(data).history.at(-1)).toEqual({ version: '3.0.0', fromVersion: '2.0.0', outcome: 'rolled-back', reason: 'did not listen', at: 30 })
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
