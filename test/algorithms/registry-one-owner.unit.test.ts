/**
 * The registry is the one owner of the algorithms; the `algorithms` table is its projection
 * (runtime/algorithms/registry.ts). Whatever changes them, and across a restart, `get`/`list`
 * (memory) and `page` (the table) answer the same rows, and a service asks the registry, not
 * the table. Real database and file system; only the sidecar is scripted, so a `define` can
 * be held open.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { eq } from 'drizzle-orm'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { defaultManifestDir, type LoadedManifest } from '../../models/load-manifests.ts'
import { AlgorithmRegistryService, type AlgorithmSink } from '../../runtime/algorithms/registry.ts'
import { createLogger } from '../../runtime/log.ts'
import { migrationsDir } from '../../runtime/paths.ts'
import { TaskService } from '../../runtime/tasks/service.ts'
import { algorithmRow } from '../../shared/algorithms/view.ts'
import { loadConfig } from '../../shared/config.ts'
import { migrateDb, openDb, type OpenDb } from '../../runtime/db/client.ts'
import { algorithms } from '../../shared/db/schema/index.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { InferenceService } from '../../shared/inference/types.ts'
import { zipOf } from '../helpers/zip.ts'

const root = path.resolve(import.meta.dirname, '../..')
const faceManifest = (algorithmId: string, version: string) => ({
  ...JSON.parse(readFileSync(path.join(root, 'models/manifests/face-detection.json'), 'utf8')), algorithmId, version,
})

/** A sidecar whose `define` can be held open, and fail, for one algorithm. */
class ScriptedSidecar implements AlgorithmSink {
  held: { algorithmId: string; reached: () => void; gate: Promise<void> } | null = null
  async define(algorithm: LoadedManifest): Promise<void> {
    const held = this.held
    if (held?.algorithmId !== algorithm.manifest.algorithmId) return
    this.held = null
    held.reached()
    await held.gate
  }

  async forget(): Promise<void> {}
  /** The next define of `algorithmId` stops until `open` is called (and then fails when told to). */
  hold(algorithmId: string) {
    let open!: (fail: boolean) => void
    let reached!: () => void
    const whenReached = new Promise<void>((resolve) => { reached = resolve })
    const gate = new Promise<void>((resolve, reject) => { open = (fail) => (fail ? reject(new Error('sidecar restarted')) : resolve()) })
    this.held = { algorithmId, reached, gate }
    return { reached: whenReached, open }
  }
}

describe('algorithm registry: one owner, the table its projection', () => {
  let dir: string
  let database: OpenDb
  const sidecar = new ScriptedSidecar()
  const log = createLogger('silent', new Writable({ write: (_c, _e, done) => done() }))
  // A clock far from any file's mtime: an update time read back from a file would show.
  const clock = { now: () => 1_700_000_000_000 }
  let n = 0

  const open = () => AlgorithmRegistryService.open({
    db: database.db, projectRoot: root, dataPath: path.join(dir, 'data'), manifestDir: defaultManifestDir(root), clock, log, sidecar,
    limits: { maxEntries: 64, maxExpandedBytes: 64 * 1024 * 1024 },
  })
  const install = async (registry: AlgorithmRegistryService, manifest: object, replace = false) => {
    const file = path.join(dir, `package-${n++}.zip`)
    writeFileSync(file, await zipOf({ 'manifest.json': JSON.stringify(manifest) }))
    return registry.installArchive(file, { replace })
  }
  const byId = <T extends { algorithmId: string }>(rows: T[]) => [...rows].sort((a, b) => (a.algorithmId < b.algorithmId ? -1 : 1))
  /** The rows memory answers and the rows the table answers: they must be the same. */
  const views = async (registry: AlgorithmRegistryService) => ({
    memory: byId(registry.list().map(algorithmRow)),
    table: byId((await registry.page({ pageNum: 1, pageSize: 1000 })).rows),
  })
  const expectOneView = async (registry: AlgorithmRegistryService) => {
    const { memory, table } = await views(registry)
    expect(table).toEqual(memory)
    return memory
  }

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'registry-one-owner-'))
    database = openDb(`file:${path.join(dir, 'device.db')}`)
    await migrateDb(database.db, migrationsDir)
  })
  afterEach(() => {
    database.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('every kind of change is seen alike through get/list and page, and a restart rebuilds the same view', async () => {
    const registry = await open()
    await expectOneView(registry)
    await install(registry, faceManifest('alpha', '1.0.0'))
    await registry.save(faceManifest('beta', '1.0.0'), 'create')
    await registry.updateInfo('alpha', { algorithmName: 'Alpha, renamed' })
    await registry.updateInfo('face-detection', { supplier: 'Operator' })
    await registry.remove('face-detection-near')
    await install(registry, faceManifest('person-detector', '9.0.0'), true)
    const view = await expectOneView(registry)
    expect(view.find((r) => r.algorithmId === 'alpha')).toMatchObject({ algorithmName: 'Alpha, renamed', origin: 'package', updateTime: String(clock.now()) })
    expect(view.find((r) => r.algorithmId === 'beta')).toMatchObject({ origin: 'layout' })
    expect(view.find((r) => r.algorithmId === 'face-detection')).toMatchObject({ supplier: 'Operator', origin: 'layout' })
    expect(view.find((r) => r.algorithmId === 'person-detector')).toMatchObject({ version: '9.0.0', origin: 'package' })
    expect(view.map((r) => r.algorithmId)).not.toContain('face-detection-near')

    const restarted = await open()
    expect(restarted.list()).toEqual(registry.list())
    expect(await expectOneView(restarted)).toEqual(view)
  })

  it('a package folder left without its row (a stop between moving the folder and writing the row) answers one updateTime everywhere', async () => {
    const registry = await open()
    await install(registry, faceManifest('alpha', '1.0.0'))
    await database.db.delete(algorithms).where(eq(algorithms.algorithmId, 'alpha'))
    const restarted = await open()
    const view = await expectOneView(restarted)
    // The folder's time, in whole milliseconds as every route answers it.
    expect(view.find((r) => r.algorithmId === 'alpha')?.updateTime).toMatch(/^\d{13}$/)
  })

  it('while an install waits on the sidecar, memory and table tell the same story; a failed one leaves both as they were', async () => {
    const registry = await open()
    await install(registry, faceManifest('alpha', '1.0.0'))
    const versions = async () => ({
      memory: registry.get('alpha')?.manifest.version,
      table: (await registry.page({ algorithmId: 'alpha', pageNum: 1, pageSize: 10 })).rows[0]?.version,
    })

    const failing = sidecar.hold('alpha')
    const refused = install(registry, faceManifest('alpha', '2.0.0'), true)
    await failing.reached
    expect(await versions()).toEqual({ memory: '1.0.0', table: '1.0.0' })
    failing.open(true)
    await expect(refused).rejects.toThrow('sidecar restarted')
    expect(await versions()).toEqual({ memory: '1.0.0', table: '1.0.0' })

    const passing = sidecar.hold('alpha')
    const replaced = install(registry, faceManifest('alpha', '2.0.0'), true)
    await passing.reached
    expect(await versions()).toEqual({ memory: '1.0.0', table: '1.0.0' })
    passing.open(false)
    await replaced
    expect(await versions()).toEqual({ memory: '2.0.0', table: '2.0.0' })
    await expectOneView(registry)
  })

  it('PTaskCreate asks the registry: a row in the table that the registry does not hold is no algorithm', async () => {
    const registry = await open()
    await database.db.insert(algorithms).values({
      algorithmId: 'ghost', algorithmName: 'Ghost', algorithmUsage: '2', algorithmCategory: 'face', supplier: 'nobody', version: '1',
      description: '', models: [], runningStatus: 0, source: 'package', updatedAt: 0,
    })
    const loaded: string[] = []
    const inference = { load: async (handle: string) => { loaded.push(handle) } } as unknown as InferenceService
    const config = loadConfig({}, { dataDir: path.join(dir, 'data'), initialAdminPassword: 'initial-Passw0rd' })
    const tasks = new TaskService({ db: database.db, config, clock, log, inference, uploads: { lease: async () => { throw new Error('not used') } }, algorithms: registry })
    const error = await tasks.create({ taskId: 'ghost-task', algorithmCode: 'ghost', createdBy: null }).then(() => null, (e: unknown) => e)
    expect(error).toBeInstanceOf(ApiError)
    expect((error as ApiError).item).toMatchObject({ messageKey: 'api.error.ActionAlgLoadFailed', details: { algorithmCode: 'ghost' } })
    expect(loaded).toEqual([])
    await tasks.create({ taskId: 'real-task', algorithmCode: 'face-detection', createdBy: null })
    expect(loaded).toEqual(['real-task'])
  })
})
