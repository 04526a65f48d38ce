import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parsePackageName, validatePackage } from '../../runtime/upgrade/package.ts'
import { stageUpgrade } from '../../runtime/upgrade/stage.ts'
import { readUpgradeState } from '../../runtime/upgrade/state.ts'
import { md5, sha256, writePackage } from '../helpers/tarball.ts'

const PRODUCT = 'EdgeAIDevice'
const limits = { maxEntries: 100, maxExpandedBytes: 1024 * 1024 }

let dir: string
beforeEach(() => { dir = mkdtempSync(path.join(tmpdir(), 'upgrade-unit-')) })
afterEach(() => rmSync(dir, { recursive: true, force: true }))

/** The catalogue error a promise rejects with. */
async function refusal(promise: Promise<unknown>) {
  try {
    await promise
  } catch (error) {
    return (error as { item: { messageKey: string; details: Record<string, unknown> } }).item
  }
  throw new Error('expected a refusal')
}
const validate = (pkg: { file: string; name: string }, l = limits) => validatePackage(pkg.file, pkg.name, PRODUCT, l)

describe('upgrade package checks (spec 4.11)', () => {
  it('accepts a well-formed package and reads its manifest', async () => {
    const pkg = writePackage(dir, { version: '2.1.3' })
    const { name, listing } = await validate(pkg)
    expect(name).toMatchObject({ product: PRODUCT, version: '2.1.3', major: 2, minor: 1, patch: 3, md5: md5(pkg.bytes) })
    expect(listing.manifest.entryPoint).toBe('dist/runtime/server.mjs')
    expect([...listing.regularFiles].sort()).toEqual(['dist/runtime/server.mjs', 'package.json'])
  })

  it('refuses names that do not follow <product>-V<x>.<y>.<z>-<md5>.tar.gz', () => {
    const md5hex = 'a'.repeat(32)
    for (const name of [`${PRODUCT}-2.0.0-${md5hex}.tar.gz`, `${PRODUCT}-V2.0-${md5hex}.tar.gz`, `${PRODUCT}-V2.0.0-${'a'.repeat(31)}.tar.gz`,
      `${PRODUCT}-V2.0.0-${'g'.repeat(32)}.tar.gz`, `${PRODUCT}-V2.0.0-${md5hex}.zip`, `${PRODUCT}-V2.0.0-${md5hex}.tar.gz.exe`, '../x.tar.gz', '']) {
      expect(() => parsePackageName(name, PRODUCT), name).toThrow(expect.objectContaining({ item: expect.objectContaining({ messageKey: 'api.error.upgradeBadFilename' }) }))
    }
    expect(() => parsePackageName(`OtherBox-V2.0.0-${md5hex}.tar.gz`, PRODUCT)).toThrow(expect.objectContaining({ item: expect.objectContaining({ messageKey: 'api.error.upgradeWrongProduct', details: { product: 'OtherBox', expected: PRODUCT } }) }))
  })

  it('refuses a package whose MD5 differs from its name', async () => {
    const pkg = writePackage(dir, { md5: '0'.repeat(32) })
    expect(await refusal(validate(pkg))).toMatchObject({ messageKey: 'api.error.upgradeMd5Mismatch', details: { expected: '0'.repeat(32), actual: md5(pkg.bytes) } })
  })

  it('refuses path traversal and absolute entries', async () => {
    for (const bad of ['../evil.sh', 'dist/../../evil.sh', '/etc/cron.d/evil']) {
      const pkg = writePackage(dir, { extra: [{ path: bad, data: 'x' }] })
      expect(await refusal(validate(pkg)), bad).toMatchObject({ messageKey: 'api.error.upgradeUnsafePath', details: { entry: bad } })
    }
  })

  it('refuses links that point outside the package, accepts links inside it', async () => {
    for (const [type, linkpath] of [['SymbolicLink', '../../etc/passwd'], ['SymbolicLink', '/etc/passwd'], ['SymbolicLink', '../../../..'], ['Link', '../outside']] as const) {
      const pkg = writePackage(dir, { extra: [{ path: 'dist/lib', type, linkpath }] })
      expect(await refusal(validate(pkg)), linkpath).toMatchObject({ messageKey: 'api.error.upgradeUnsafeLink', details: { entry: 'dist/lib', linkpath } })
    }
    const inside = writePackage(dir, { extra: [{ path: 'dist/current', type: 'SymbolicLink', linkpath: 'runtime/server.mjs' }] })
    await expect(validate(inside)).resolves.toBeTruthy()
  })

  it('refuses links that escape through other links of the archive, in either order', async () => {
    const chains: [string, { path: string; type: 'SymbolicLink' | 'Link'; linkpath: string }[], string, string][] = [
      ['symlink through a climbing symlink', [{ path: 'd/up', type: 'SymbolicLink', linkpath: '..' }, { path: 'x', type: 'SymbolicLink', linkpath: 'd/up/..' }], 'x', 'd/up/..'],
      ['the same, later link first', [{ path: 'x', type: 'SymbolicLink', linkpath: 'd/up/..' }, { path: 'd/up', type: 'SymbolicLink', linkpath: '..' }], 'x', 'd/up/..'],
      ['symlink inside a linked folder', [{ path: 'dist/here', type: 'SymbolicLink', linkpath: '.' }, { path: 'dist/lib', type: 'SymbolicLink', linkpath: 'here/here/..' }, { path: 'y', type: 'SymbolicLink', linkpath: 'dist/lib/..' }], 'y', 'dist/lib/..'],
      ['hard link through a symlink', [{ path: 'd/up', type: 'SymbolicLink', linkpath: '..' }, { path: 'h', type: 'Link', linkpath: 'd/up/../etc/passwd' }], 'h', 'd/up/../etc/passwd'],
      ['a symlink loop', [{ path: 'a', type: 'SymbolicLink', linkpath: 'b' }, { path: 'b', type: 'SymbolicLink', linkpath: 'a' }], 'a', 'b'],
    ]
    for (const [what, extra, entry, linkpath] of chains) {
      const pkg = writePackage(dir, { extra })
      expect(await refusal(validate(pkg)), what).toMatchObject({ messageKey: 'api.error.upgradeUnsafeLink', details: { entry, linkpath } })
    }
    const chainedInside = writePackage(dir, { extra: [{ path: 'dist/up', type: 'SymbolicLink', linkpath: '..' }, { path: 'x', type: 'SymbolicLink', linkpath: 'dist/up/package.json' }] })
    await expect(validate(chainedInside)).resolves.toBeTruthy()
  })

  it('refuses device files and FIFOs', async () => {
    for (const type of ['CharacterDevice', 'BlockDevice', 'FIFO'] as const) {
      const pkg = writePackage(dir, { extra: [{ path: 'dev/thing', type }] })
      expect(await refusal(validate(pkg)), type).toMatchObject({ messageKey: 'api.error.upgradeUnsafeEntryType', details: { entry: 'dev/thing', type } })
    }
  })

  it('refuses an archive that expands beyond the limit or has too many entries', async () => {
    // 2 MB of zeros compress to a few KB: the expanded size is what counts.
    const bomb = writePackage(dir, { files: { 'dist/runtime/server.mjs': 'x', 'zeros.bin': Buffer.alloc(2 * 1024 * 1024) } })
    expect(bomb.bytes.length).toBeLessThan(64 * 1024)
    expect(await refusal(validate(bomb))).toMatchObject({ messageKey: 'api.error.upgradeTooLarge', details: { limitBytes: String(limits.maxExpandedBytes) } })
    const files = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`f${i}.txt`, String(i)]))
    const many = writePackage(dir, { files: { 'dist/runtime/server.mjs': 'x', ...files } })
    expect(await refusal(validate(many, { ...limits, maxEntries: 5 }))).toMatchObject({ messageKey: 'api.error.upgradeTooManyEntries', details: { limit: 5 } })
  })

  it('refuses a package without manifest, with a malformed one, or with unlisted files', async () => {
    expect(await refusal(validate(writePackage(dir, { manifest: null })))).toMatchObject({ messageKey: 'api.error.upgradeManifestMissing' })
    const wrongVersion = writePackage(dir, { version: '2.0.0', manifest: { product: PRODUCT, version: '3.0.0', entryPoint: 'dist/runtime/server.mjs', files: {} } })
    expect(await refusal(validate(wrongVersion))).toMatchObject({ messageKey: 'api.error.upgradeManifestInvalid' })
    const noEntry = writePackage(dir, { entryPoint: 'dist/missing.mjs' })
    expect(await refusal(validate(noEntry))).toMatchObject({ messageKey: 'api.error.upgradeManifestInvalid', details: { entryPoint: 'dist/missing.mjs' } })
    const unlisted = writePackage(dir, { extra: [{ path: 'dist/extra.mjs', data: 'sneaky' }] })
    expect(await refusal(validate(unlisted))).toMatchObject({ messageKey: 'api.error.upgradeChecksumMismatch', details: { file: 'dist/extra.mjs' } })
  })

  it('refuses a file that is not a gzip tar archive', async () => {
    const bytes = Buffer.from('definitely not an archive'.repeat(40))
    const file = path.join(dir, `${PRODUCT}-V2.0.0-${md5(bytes)}.tar.gz`)
    writeFileSync(file, bytes)
    expect(await refusal(validatePackage(file, path.basename(file), PRODUCT, limits))).toMatchObject({ messageKey: 'api.error.upgradeArchiveCorrupt' })
  })
})

describe('staging an upgrade', () => {
  const stage = (pkg: { file: string; name: string }, runningVersion = '1.0.0') => stageUpgrade({
    dataPath: path.join(dir, 'data'), file: pkg.file, take: 'copy', originalFilename: pkg.name, product: PRODUCT, limits, runningVersion, requestedBy: 'admin', now: 1000,
  })

  it('extracts, verifies checksums, keeps the package and records the pending upgrade', async () => {
    const pkg = writePackage(dir, { version: '2.0.0' })
    const pending = await stage(pkg)
    expect(pending).toMatchObject({ version: '2.0.0', fromVersion: '1.0.0', entryPoint: 'dist/runtime/server.mjs', md5: md5(pkg.bytes), requestedBy: 'admin' })
    expect(existsSync(path.join(pending.stagingDir, 'dist/runtime/server.mjs'))).toBe(true)
    expect(existsSync(pending.packageFile)).toBe(true)
    expect(readUpgradeState(path.join(dir, 'data')).pending?.version).toBe('2.0.0')
    expect(await refusal(stage(writePackage(dir, { version: '2.0.1' })))).toMatchObject({ messageKey: 'api.error.upgradeInProgress', details: { version: '2.0.0' } })
  })

  it('serializes concurrent staging: of two calls at once, the second gets upgradeInProgress and nothing of it is staged', async () => {
    const first = writePackage(dir, { version: '2.0.0' })
    const second = writePackage(dir, { version: '2.0.1' })
    const [a, b] = await Promise.allSettled([stage(first), stage(second)])
    expect(a).toMatchObject({ status: 'fulfilled', value: { version: '2.0.0' } })
    expect(b.status).toBe('rejected')
    expect((b as PromiseRejectedResult).reason.item).toMatchObject({ messageKey: 'api.error.upgradeInProgress', details: { version: '2.0.0' } })
    const data = path.join(dir, 'data')
    expect(readUpgradeState(data).pending?.version).toBe('2.0.0')
    expect(readdirSync(path.join(data, 'upgrade', 'staging'))).toEqual(['2.0.0'])
    expect(readdirSync(path.join(data, 'upgrade', 'packages'))).toEqual([first.name])
  })

  it('refuses a version that is not newer than the running one', async () => {
    expect(await refusal(stage(writePackage(dir, { version: '1.0.0' })))).toMatchObject({ messageKey: 'api.error.upgradeNotNewer', details: { version: '1.0.0', runningVersion: '1.0.0' } })
  })

  it('refuses a file whose bytes differ from its checksum and leaves nothing staged', async () => {
    const manifest = { product: PRODUCT, version: '2.0.0', entryPoint: 'dist/runtime/server.mjs', files: { 'dist/runtime/server.mjs': sha256('something else') } }
    const pkg = writePackage(dir, { manifest, files: { 'dist/runtime/server.mjs': 'the real bytes' } })
    expect(await refusal(stage(pkg))).toMatchObject({ messageKey: 'api.error.upgradeChecksumMismatch', details: { file: 'dist/runtime/server.mjs', expected: sha256('something else') } })
    const data = path.join(dir, 'data')
    expect(readUpgradeState(data).pending).toBeNull()
    const staging = path.join(data, 'upgrade', 'staging')
    expect(existsSync(staging) ? readdirSync(staging) : []).toEqual([])
    const packages = path.join(data, 'upgrade', 'packages')
    expect(existsSync(packages) ? readdirSync(packages) : []).toEqual([])
  })
})
