/**
 * An install that fails after its checks passed (the sidecar restarting under `define`, say)
 * leaves the registry as it was: on disk, in the `algorithms` table, in memory and in the
 * sidecar's definitions. The registry runs on the real database and file system; only the
 * sidecar is scripted, so that it can fail on cue.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { defaultManifestDir, type LoadedManifest } from '../../models/load-manifests.ts'
import { AlgorithmRegistryService, type AlgorithmSink } from '../../runtime/algorithms/registry.ts'
import { algorithms } from '../../shared/db/schema/index.ts'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'
import { zipOf } from '../helpers/zip.ts'

const root = path.resolve(import.meta.dirname, '../..')
const faceManifest = (algorithmId: string, version: string) => ({
  ...JSON.parse(readFileSync(path.join(root, 'models/manifests/face-detection.json'), 'utf8')), algorithmId, version,
})

/** A sidecar that keeps definitions like the real client and fails `define` for the ids in `failing`. */
class ScriptedSidecar implements AlgorithmSink {
  readonly definitions = new Map<string, LoadedManifest>()
  readonly failing = new Set<string>()
  async define(algorithm: LoadedManifest): Promise<void> {
    this.definitions.set(algorithm.manifest.algorithmId, algorithm)
    if (this.failing.has(algorithm.manifest.algorithmId)) throw new Error('sidecar restarted')
  }

  async forget(algorithmId: string): Promise<void> {
    this.definitions.delete(algorithmId)
  }
}

describe('algorithm registry: a failed install is undone whole', () => {
  let rt: TestRuntime
  let dataPath: string
  let work: string
  let registry: AlgorithmRegistryService
  const sidecar = new ScriptedSidecar()
  let n = 0

  const install = async (files: Record<string, string>, replace = false) => {
    const file = path.join(work, `package-${n++}.zip`)
    writeFileSync(file, await zipOf(files))
    return registry.installArchive(file, { replace })
  }
  const row = async (algorithmId: string) => (await rt.runtime.services.db.select().from(algorithms).where(eq(algorithms.algorithmId, algorithmId)))[0]
  const packagesDir = () => path.join(dataPath, 'algorithm-packages')

  beforeAll(async () => {
    rt = await createTestRuntime()
    dataPath = mkdtempSync(path.join(tmpdir(), 'registry-rollback-'))
    work = mkdtempSync(path.join(tmpdir(), 'registry-rollback-work-'))
    registry = await AlgorithmRegistryService.open({
      db: rt.runtime.services.db, projectRoot: root, dataPath, manifestDir: defaultManifestDir(root), clock: rt.clock,
      log: rt.runtime.services.log, sidecar, limits: { maxEntries: 64, maxExpandedBytes: 64 * 1024 * 1024 },
    })
  })
  afterAll(async () => {
    await rt.close()
    rmSync(dataPath, { recursive: true, force: true })
    rmSync(work, { recursive: true, force: true })
  })

  it('a package of two algorithms whose second fails to define installs neither', async () => {
    sidecar.failing.add('beta')
    const refused = install({
      'alpha/manifest.json': JSON.stringify(faceManifest('alpha', '1.0.0')),
      'beta/manifest.json': JSON.stringify(faceManifest('beta', '1.0.0')),
    })
    await expect(refused).rejects.toThrow('sidecar restarted')
    sidecar.failing.clear()
    expect(registry.get('alpha')).toBeNull()
    expect(registry.get('beta')).toBeNull()
    expect(await row('alpha')).toBeUndefined()
    expect(await row('beta')).toBeUndefined()
    expect([...sidecar.definitions.keys()]).not.toContain('alpha')
    expect([...sidecar.definitions.keys()]).not.toContain('beta')
    expect(readdirSync(packagesDir())).toEqual([])
  })

  it('a replacement that fails to define leaves the installed version working', async () => {
    await install({ 'manifest.json': JSON.stringify(faceManifest('alpha', '1.0.0')) })
    expect(registry.get('alpha')?.manifest.version).toBe('1.0.0')

    sidecar.failing.add('alpha')
    await expect(install({ 'manifest.json': JSON.stringify(faceManifest('alpha', '2.0.0')) }, true)).rejects.toThrow('sidecar restarted')
    sidecar.failing.clear()

    expect(registry.get('alpha')?.manifest.version).toBe('1.0.0')
    expect((await row('alpha'))?.version).toBe('1.0.0')
    expect(sidecar.definitions.get('alpha')?.manifest.version).toBe('1.0.0')
    expect(readdirSync(packagesDir())).toEqual(['alpha'])
    const onDisk = JSON.parse(readFileSync(path.join(packagesDir(), 'alpha', 'manifest.json'), 'utf8'))
    expect(onDisk.version).toBe('1.0.0')

    // And the next replacement goes through.
    await install({ 'manifest.json': JSON.stringify(faceManifest('alpha', '2.0.0')) }, true)
    expect(registry.get('alpha')?.manifest.version).toBe('2.0.0')
    expect(sidecar.definitions.get('alpha')?.manifest.version).toBe('2.0.0')
    expect(existsSync(path.join(packagesDir(), 'alpha', 'manifest.json'))).toBe(true)
    expect(readdirSync(packagesDir())).toEqual(['alpha'])
  })
})
