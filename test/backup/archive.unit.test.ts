/**
 * The backup archive (README "Backup, restore and factory reset") on real services and real
 * libsql files: what a backup holds and leaves out, credentials encrypted, a round trip into
 * another device, every damage refused by its own key, an older schema migrated forward, and
 * an apply that fails part-way leaving the device as it was.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { gunzipSync } from 'node:zlib'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applyPendingRestore } from '../../runtime/backup/apply.ts'
import { restoreDirOf, writePendingRestore, readLastRestore } from '../../runtime/backup/records.ts'
import { backedUpTables, migrationSteps } from '../../runtime/backup/schema.ts'
import { EXCLUDED_ROWS } from '../../runtime/backup/policy.ts'
import { openAtLevel, tableNames, columnsOf } from '../../runtime/backup/scratch-db.ts'
import { scratchDbOf, validateBackup } from '../../runtime/backup/validate.ts'
import { createLogger } from '../../runtime/log.ts'
import { nearestImagesQuery } from '../../runtime/galleries/search.ts'
import { openDb } from '../../runtime/db/client.ts'
import { migrationsDir } from '../../runtime/paths.ts'
import { cameras, faceGalleries, galleryFaces, galleryPersons, galleryTablesOf, sessions, systemSettings, users } from '../../shared/db/schema/index.ts'
import type { Identity } from '../../shared/handler.ts'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'
import { archiveOf, jsonl, manifestOf, readArchive, resign, rowsOf } from '../helpers/backup-archive.ts'

const PASSPHRASE = 'correct horse battery'
const CAMERA_PASSWORD = 'Cam-Secret-777'
const MQTT_PASSWORD = 'Mqtt-Secret-888'
const log = createLogger('silent', new Writable({ write: (_c, _e, done) => done() }))
const work = mkdtempSync(path.join(tmpdir(), 'backup-unit-'))
const migrations = migrationSteps(migrationsDir)

let source: TestRuntime
let archive: Buffer
let entries: Map<string, Buffer>
const identity = (userId: string, sessionId = 'session-1'): Identity => ({ userId, accountName: 'admin', sessionId, transport: 'http', passwordChangeRequired: false })

/** Every row of every backed-up table, in rowid order, but the rows of the host a device keeps (policy.ts): what a restore must give back. */
async function tableContents(rt: TestRuntime): Promise<Record<string, Record<string, unknown>[]>> {
  const out: Record<string, Record<string, unknown>[]> = {}
  for (const table of backedUpTables()) {
    const kept = EXCLUDED_ROWS.filter((rule) => rule.table === table.name)
    const rows = await rt.runtime.services.db.all<Record<string, unknown>>(sql.raw(`SELECT * FROM "${table.name}" ORDER BY rowid`))
    out[table.name] = rows.filter((row) => !kept.some((rule) => rule.values.includes(String(row[rule.column]))))
  }
  return out
}

let n = 0
/** Validates `bytes` as a restore would, into a folder of its own; answers the refusal's message item or the result. */
async function validate(bytes: Buffer, passphrase = PASSPHRASE, dataPath = source.config.dataPath) {
  const file = path.join(work, `candidate-${++n}.tar.gz`)
  writeFileSync(file, bytes)
  const dir = path.join(work, `validate-${n}`)
  mkdirSync(dir)
  try {
    return { ok: await validateBackup({ file, dir, dataPath, passphrase, migrationsDir, migrations, limits: { maxEntries: 1000, maxExpandedBytes: 64 * 1024 * 1024 } }), dir }
  } catch (error) {
    return { refused: (error as { item?: unknown }).item ?? error, dir }
  }
}

beforeAll(async () => {
  source = await createTestRuntime()
  const { db } = source.runtime.services
  const now = Date.now()
  const [admin] = await db.select().from(users)
  await db.insert(sessions).values({ id: 's1', tokenHash: 'f'.repeat(64), userId: admin!.id, createdAt: now, lastSeenAt: now })
  await db.insert(cameras).values({ cameraId: 'cam-1', cameraName: 'door', sourceType: 'rtsp', url: 'rtsp://10.0.0.5:554/s', username: 'cam-user', password: CAMERA_PASSWORD, createdAt: now, updatedAt: now })
  await db.insert(systemSettings).values([
    { key: 'mqtt', value: JSON.stringify({ url: 'mqtt://broker:1883', username: 'dev', password: MQTT_PASSWORD }), updatedAt: now },
    { key: 'network.pendingChange', value: '{"changeId":"c1"}', updatedAt: now },
  ])
  await db.insert(faceGalleries).values({ galleryId: 'staff', name: 'Staff', createdAt: now, updatedAt: now })
  await db.insert(galleryPersons).values({ galleryId: 'staff', itemId: 'p1', name: 'Ada', attributes: { team: 'ops' }, createdAt: now, updatedAt: now })
  const descriptor = descriptorOf(0)
  await db.insert(galleryFaces).values({ galleryId: 'staff', itemId: 'p1', descriptor, descriptorModel: MODEL, picture: Buffer.from([0xff, 0xd8, 1, 2, 3]), createdAt: now })
  const data = source.config.dataPath
  mkdirSync(path.join(data, 'models'), { recursive: true })
  writeFileSync(path.join(data, 'models', 'user-model.onnx'), Buffer.from('onnx bytes'))
  symlinkSync('/etc/passwd', path.join(data, 'models', 'outside'))
  mkdirSync(path.join(data, 'algorithm-packages', 'my-alg'), { recursive: true })
  writeFileSync(path.join(data, 'algorithm-packages', 'my-alg', 'manifest.json'), '{"algorithmId":"my-alg"}')
  mkdirSync(path.join(data, 'tmp'), { recursive: true })
  writeFileSync(path.join(data, 'tmp', 'export-leftover.zip'), 'scratch')
  const info = await source.runtime.services.backup.create(PASSPHRASE, identity(admin!.id))
  archive = readFileSync(path.join(data, 'backup', `${info.backupId}.tar.gz`))
  expect(info.sizeBytes).toBe(String(archive.length))
  entries = await readArchive(archive)
})
afterAll(async () => {
  await source?.close()
  rmSync(work, { recursive: true, force: true })
})

describe('what a backup holds', () => {
  it('every table of the schema but the excluded ones, the data folders but the excluded ones, no links', () => {
    const manifest = manifestOf(entries)
    expect(manifest.tables.map((t) => t.name)).toEqual(backedUpTables().map((t) => t.name))
    for (const excluded of ['sessions', 'events', 'event_cursors', 'upload_sessions', 'upload_chunks', 'login_throttle', 'webhook_dead_letters']) {
      expect(entries.has(`db/${excluded}.jsonl`), excluded).toBe(false)
    }
    expect([...entries.keys()].filter((e) => e.startsWith('files/')).sort()).toEqual(['files/algorithm-packages/my-alg/manifest.json', 'files/models/user-model.onnx'])
    expect(manifest.migrations).toEqual(migrations)
    expect(manifest.formatVersion).toBe(1)
    expect(rowsOf(entries, 'cameras')).toHaveLength(1)
    expect(rowsOf(entries, 'gallery_faces')).toHaveLength(1)
    // A network change under confirm-or-rollback is the host's, not the device's.
    expect(rowsOf(entries, 'system_settings').map((r) => r.key)).toEqual(['mqtt'])
  })

  it('credentials travel encrypted: neither password appears in the archive, and their columns hold sealed values', () => {
    const plain = gunzipSync(archive).toString('latin1')
    expect(plain).not.toContain(CAMERA_PASSWORD)
    expect(plain).not.toContain(MQTT_PASSWORD)
    expect(rowsOf(entries, 'cameras')[0]).toMatchObject({ username: 'cam-user', password: { $secret: expect.any(String) } })
    expect(rowsOf(entries, 'users')[0]).toMatchObject({ password_hash: { $secret: expect.any(String) } })
    expect(rowsOf(entries, 'gallery_faces')[0]).toMatchObject({ descriptor: { $blob: expect.any(String) }, picture: { $blob: Buffer.from([0xff, 0xd8, 1, 2, 3]).toString('base64') } })
  })
})

describe('restore into another device', () => {
  it('gives back every row and data file; its sessions end; its own folders the backup lacks are emptied', async () => {
    const target = await createTestRuntime()
    try {
      const { db } = target.runtime.services
      const [admin] = await db.select().from(users)
      await db.insert(sessions).values({ id: 's2', tokenHash: 'e'.repeat(64), userId: admin!.id, createdAt: 1, lastSeenAt: 1 })
      // A face of its own under the id the backup's face has: the vector index must take the id again.
      await addFace(target, 'visitors', 0.25)
      mkdirSync(path.join(target.config.dataPath, 'cameras'), { recursive: true })
      writeFileSync(path.join(target.config.dataPath, 'cameras', 'old.video'), 'old')
      const checked = await validate(archive, PASSPHRASE, target.config.dataPath)
      expect(checked.ok?.migrationsRun).toBe(0)
      await stage(target, checked.dir, checked.ok!)
      expect(await applyPendingRestore(target.config, log)).toMatchObject({ outcome: 'restored', reason: null })

      expect(await tableContents(target)).toEqual(await tableContents(source))
      expect(await db.select().from(sessions)).toEqual([])
      expect(await db.all(nearestImagesQuery(galleryTablesOf.face, descriptorOf(0), MODEL, 5, ['staff']))).toHaveLength(1)
      const data = target.config.dataPath
      expect(readFileSync(path.join(data, 'models', 'user-model.onnx'), 'utf8')).toBe('onnx bytes')
      expect(readFileSync(path.join(data, 'algorithm-packages', 'my-alg', 'manifest.json'), 'utf8')).toBe('{"algorithmId":"my-alg"}')
      expect(readdirSync(path.join(data, 'cameras'))).toEqual([])
      expect(readdirSync(restoreDirOf(data))).toEqual(['last.json'])
    } finally {
      await target.close()
    }
  })

  it('an apply that fails part-way (a table after the galleries cannot be read) leaves every table, index and folder as they were', async () => {
    const target = await createTestRuntime()
    try {
      const data = target.config.dataPath
      mkdirSync(path.join(data, 'models'), { recursive: true })
      writeFileSync(path.join(data, 'models', 'mine.onnx'), 'mine')
      await addFace(target, 'visitors', 0.25)
      const before = await tableContents(target)
      const checked = await validate(archive, PASSPHRASE, data)
      await stage(target, checked.dir, checked.ok!)
      const scratch = openDb(`file:${scratchDbOf(path.join(restoreDirOf(data), 'staged'))}`)
      await scratch.client.execute('DROP TABLE users')
      scratch.close()
      const outcome = await applyPendingRestore(target.config, log)
      expect(outcome).toMatchObject({ outcome: 'failed', reason: expect.any(String) })
      expect(readLastRestore(data)).toMatchObject({ outcome: 'failed' })
      expect(await tableContents(target)).toEqual(before)
      expect(readdirSync(path.join(data, 'models'))).toEqual(['mine.onnx'])
      // The vector index dropped for the copy came back with the rollback: the face is found by it.
      const nearest = await target.runtime.services.db.all(nearestImagesQuery(galleryTablesOf.face, descriptorOf(0.25), MODEL, 5, ['visitors']))
      expect(nearest).toHaveLength(1)
      expect(existsSync(path.join(data, 'algorithm-packages', 'my-alg'))).toBe(false)
      expect(readdirSync(restoreDirOf(data))).toEqual(['last.json'])
    } finally {
      await target.close()
    }
  })
})

/** The descriptor model the test's faces are recorded with (models/descriptor-model.ts). */
const MODEL = 'build:face-recognition-resnet#descriptor@2'
const descriptorOf = (phase: number) => Float32Array.from({ length: 128 }, (_, i) => Math.sin(i + phase))
/** The dlib ResNet's first descriptor version (L2-normalized, compared by the cosine), and one such descriptor. */
const MODEL_V1 = 'build:face-recognition-resnet#descriptor'
const FIRST_VERSION_DESCRIPTOR = ((v) => v.map((x) => x / Math.hypot(...v)))(descriptorOf(0.5))

async function addFace(rt: TestRuntime, galleryId: string, phase: number) {
  const { db } = rt.runtime.services
  await db.insert(faceGalleries).values({ galleryId, name: galleryId, createdAt: 1, updatedAt: 1 })
  await db.insert(galleryPersons).values({ galleryId, itemId: 'p', name: 'P', attributes: {}, createdAt: 1, updatedAt: 1 })
  await db.insert(galleryFaces).values({ galleryId, itemId: 'p', descriptor: descriptorOf(phase), descriptorModel: MODEL, picture: Buffer.from([1]), createdAt: 1 })
}

/** What the Restore route does once a backup passed: the validated folder moved where the start-up looks, and the record. */
async function stage(rt: TestRuntime, dir: string, checked: Awaited<ReturnType<typeof validateBackup>>) {
  mkdirSync(restoreDirOf(rt.config.dataPath), { recursive: true })
  renameSync(dir, path.join(restoreDirOf(rt.config.dataPath), 'staged'))
  const { manifest } = checked
  writePendingRestore(rt.config.dataPath, {
    id: 'staged', stagedAt: Date.now(), requestedBy: 'admin', backupCreatedAt: manifest.createdAt, backupSoftwareVersion: manifest.softwareVersion,
    migrationsRun: checked.migrationsRun, folders: checked.folders, phase: 'staged',
  })
}

describe('damaged backups are refused before anything is changed', () => {
  const refusedWith = async (bytes: Buffer, messageKey: string, details: Record<string, unknown> = {}, passphrase = PASSPHRASE) => {
    const result = await validate(bytes, passphrase)
    expect(result.refused, messageKey).toMatchObject({ messageKey, details })
  }

  it('a truncated archive, a file that is no archive', async () => {
    await refusedWith(archive.subarray(0, Math.floor(archive.length / 2)), 'api.error.BackupArchiveCorrupt')
    await refusedWith(Buffer.from('hello'), 'api.error.BackupArchiveCorrupt', { reason: 'not a gzip file' })
  })

  it('unsafe entries: a climbing path, a symbolic link, a hard link, a device', async () => {
    await refusedWith(archiveOf(entries, [{ path: '../escape.txt', data: 'x' }]), 'api.error.BackupArchiveUnsafe', { entry: '../escape.txt' })
    await refusedWith(archiveOf(entries, [{ path: 'files/models/link', type: 'SymbolicLink', linkpath: 'user-model.onnx' }]), 'api.error.BackupArchiveUnsafe', { entry: 'files/models/link' })
    await refusedWith(archiveOf(entries, [{ path: 'files/models/hard', type: 'Link', linkpath: 'files/models/user-model.onnx' }]), 'api.error.BackupArchiveUnsafe')
    await refusedWith(archiveOf(entries, [{ path: 'files/models/dev', type: 'CharacterDevice' }]), 'api.error.BackupArchiveUnsafe')
  })

  it('too many entries for the limit', async () => {
    const many = archiveOf(entries, Array.from({ length: 1001 }, (_, i) => ({ path: `x/${i}`, data: '' })))
    await refusedWith(many, 'api.error.BackupArchiveTooLarge', { limitEntries: 1000 })
  })

  it('a bad checksum, a missing entry, an entry the manifest does not list', async () => {
    const altered = new Map(entries)
    altered.set('files/models/user-model.onnx', Buffer.from('onnx bytez'))
    await refusedWith(archiveOf(altered), 'api.error.BackupChecksumMismatch', { entry: 'files/models/user-model.onnx' })
    const missing = new Map(entries)
    missing.delete('db/cameras.jsonl')
    await refusedWith(archiveOf(missing), 'api.error.BackupChecksumMismatch', { entry: 'db/cameras.jsonl', reason: 'missing from the archive' })
    await refusedWith(archiveOf(entries, [{ path: 'files/models/extra.onnx', data: 'x' }]), 'api.error.BackupChecksumMismatch', { entry: 'files/models/extra.onnx' })
  })

  it('the wrong passphrase, and a manifest altered without it', async () => {
    await refusedWith(archive, 'api.error.BackupAuthenticationFailed', {}, 'not the passphrase')
    const altered = new Map(entries)
    const text = entries.get('manifest.json')!.toString('utf8')
    altered.set('manifest.json', Buffer.from(text.replace(/"createdAt": ?(\d)/, '"createdAt": 1$1')))
    expect(altered.get('manifest.json')!.toString('utf8')).not.toBe(text)
    await refusedWith(archiveOf(altered), 'api.error.BackupAuthenticationFailed')
  })

  it('a newer format, a newer schema', async () => {
    await refusedWith(archiveOf(await resign(entries, PASSPHRASE, (m) => { (m as { formatVersion: number }).formatVersion = 2 })), 'api.error.BackupFormatUnsupported', { formatVersion: '2', supported: [1] })
    const newer = await resign(entries, PASSPHRASE, (m) => { m.migrations.push({ tag: '9999_future', hash: 'a'.repeat(64) }) })
    await refusedWith(archiveOf(newer), 'api.error.BackupSchemaNewer', { migration: '9999_future', backupMigrations: migrations.length + 1, deviceMigrations: migrations.length })
  })

  it('an unknown table, an unknown column, an excluded table, a value of the wrong type, a broken constraint, a value outside its set', async () => {
    const addTable = (name: string) => resign(entries, PASSPHRASE, (m, e) => {
      m.tables.push({ name, entry: `db/${name}.jsonl`, rows: 0, bytes: 0, sha256: '' })
      e.set(`db/${name}.jsonl`, jsonl([{ id: 'x' }]))
    })
    await refusedWith(archiveOf(await addTable('no_such_table')), 'api.error.BackupRowInvalid', { table: 'no_such_table', reason: 'no such table at the backup\'s schema level' })
    await refusedWith(archiveOf(await addTable('sessions')), 'api.error.BackupRowInvalid', { table: 'sessions', reason: 'this table is never in a backup' })
    const editRow = (table: string, edit: (row: Record<string, unknown>) => void) => resign(entries, PASSPHRASE, (_m, e) => {
      const rows = rowsOf(e, table)
      edit(rows[0]!)
      e.set(`db/${table}.jsonl`, jsonl(rows))
    })
    await refusedWith(archiveOf(await editRow('face_galleries', (r) => { r.colour = 'red' })), 'api.error.BackupRowInvalid', { table: 'face_galleries', line: 1, column: 'colour' })
    await refusedWith(archiveOf(await editRow('face_galleries', (r) => { r.created_at = 'yesterday' })), 'api.error.BackupRowInvalid', { table: 'face_galleries', column: 'created_at', reason: 'a string value in a INTEGER column' })
    await refusedWith(archiveOf(await editRow('face_galleries', (r) => { delete r.name })), 'api.error.BackupRowInvalid', { table: 'face_galleries', line: 1 })
    await refusedWith(archiveOf(await editRow('cameras', (r) => { r.source_type = 'telepathy' })), 'api.error.BackupRowInvalid', { table: 'cameras', column: 'source_type' })
    await refusedWith(archiveOf(await editRow('cameras', (r) => { r.password = 'plain' })), 'api.error.BackupRowInvalid', { table: 'cameras', column: 'password', reason: 'a secret column holds a value that is not encrypted' })
    await refusedWith(archiveOf(await editRow('gallery_faces', (r) => { r.descriptor = { $blob: Buffer.alloc(12).toString('base64') } })), 'api.error.BackupRowInvalid', { table: 'gallery_faces' })
    await refusedWith(archiveOf(await editRow('system_settings', (r) => { r.key = 'network.pendingChange' })), 'api.error.BackupRowInvalid', { table: 'system_settings', reason: 'a row the device never restores' })
  })

  it('a file outside the folders a backup holds', async () => {
    const stray = await resign(entries, PASSPHRASE, (m, e) => {
      m.files.push({ path: 'files/releases/9.9.9/server.mjs', bytes: 0, sha256: '' })
      e.set('files/releases/9.9.9/server.mjs', Buffer.from('evil'))
    })
    await refusedWith(archiveOf(stray), 'api.error.BackupManifestInvalid')
  })
})

describe('a backup of an older schema', () => {
  it('is restored with the device\'s later migrations run forward on its rows', async () => {
    // The schema before migration 0018_face_l2_index (which makes the face index l2), and the later ones.
    const level = migrations.findIndex((m) => m.tag === '0018_face_l2_index')
    expect(level).toBeGreaterThan(0)
    const forward = migrations.length - level
    // The tables and columns the database had then.
    const old = await openAtLevel(path.join(work, 'level.db'), migrationsDir, level)
    const shape = new Map<string, string[]>()
    for (const table of await tableNames(old.client)) shape.set(table, (await columnsOf(old.client, table)).map((c) => c.name))
    old.close()
    const older = await resign(entries, PASSPHRASE, (m, e) => {
      m.migrations = m.migrations.slice(0, level)
      m.tables = m.tables.filter((t) => shape.has(t.name))
      for (const key of [...e.keys()]) if (key.startsWith('db/') && !shape.has(key.slice(3, -6))) e.delete(key)
      for (const t of m.tables) e.set(t.entry, jsonl(rowsOf(e, t.name).map((row) => Object.fromEntries(Object.entries(row).filter(([c]) => shape.get(t.name)!.includes(c))))))
      // Then a face descriptor was the dlib ResNet's first version, L2-normalized in a
      // cosine index (migration 0018_face_l2_index makes the index l2 and keeps the rows).
      e.set('db/gallery_faces.jsonl', jsonl(rowsOf(e, 'gallery_faces').map((row) => ({ ...row, descriptor: { $blob: Buffer.from(FIRST_VERSION_DESCRIPTOR.buffer).toString('base64') }, descriptor_model: MODEL_V1 }))))
    })
    const target = await createTestRuntime()
    try {
      const checked = await validate(archiveOf(older), PASSPHRASE, target.config.dataPath)
      expect(checked.refused).toBeUndefined()
      expect(checked.ok!.migrationsRun).toBe(forward)
      await stage(target, checked.dir, checked.ok!)
      expect(await applyPendingRestore(target.config, log)).toMatchObject({ outcome: 'restored', migrationsRun: forward })
      const restored = await tableContents(target)
      const original = await tableContents(source)
      for (const table of backedUpTables()) {
        if (shape.has(table.name)) expect(restored[table.name], table.name).toHaveLength(original[table.name]!.length)
        else expect(restored[table.name], table.name).toEqual([])
      }
      // The faces keep the first version's descriptor and its name: the device describes them again
      // at its start, and no search of the current model compares them (docs/galleries.md "Descriptor model changes").
      expect(await target.runtime.services.db.select({ descriptor: galleryFaces.descriptor, model: galleryFaces.descriptorModel }).from(galleryFaces)).toEqual([{ descriptor: FIRST_VERSION_DESCRIPTOR, model: MODEL_V1 }])
      expect(await target.runtime.services.db.all(nearestImagesQuery(galleryTablesOf.face, FIRST_VERSION_DESCRIPTOR, MODEL, 5, []))).toEqual([])
    } finally {
      await target.close()
    }
  })
})
