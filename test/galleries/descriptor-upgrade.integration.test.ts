/**
 * A face gallery enrolled before descriptors were versioned (FaceRes, 1024 values, no
 * `descriptor_model`) keeps recognizing after the device starts with the dlib ResNet
 * (docs/galleries.md "Descriptor model changes"): the migration keeps the faces' stored pictures,
 * the device describes them again in the background, reports it (`QueryDeviceStatus` →
 * `galleryRedescription`, `gallery.redescribing` events), and the people's other photos find them.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { sql } from 'drizzle-orm'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrateDb, openDb } from '../../shared/db/client.ts'
import { InferenceEngine } from '../../runtime/sidecar/engine.ts'
import { alignByEyes } from '../../runtime/sidecar/pipeline/crop.ts'
import { startDevice, type DeviceProcess } from '../helpers/device.ts'
import { limits } from '../inference/helpers.ts'
import { targetsOf } from './faces.ts'

const projectRoot = path.resolve(import.meta.dirname, '../..')
const facesDir = path.resolve(projectRoot, '../shared/media/faces')
const migrationsDir = path.join(projectRoot, 'shared/db/migrations')
/** The last migration before descriptors were versioned by model. */
const LAST_OLD_MIGRATION = '0016_stream_task_name'

const labels = readFileSync(path.join(facesDir, 'labels.csv'), 'utf8').trim().split('\n').slice(1).map((l) => {
  const [file, identity] = l.split(',')
  return { file: file!.trim(), identity: (identity ?? '').trim() }
})
// One photo enrolled per person (the first of each in labels.csv); the others are probes.
const people = [...new Set(labels.map((l) => l.identity).filter(Boolean))]
const enrolled = people.map((p) => labels.find((l) => l.identity === p)!)
const probes = labels.filter((l) => l.identity && !enrolled.includes(l))
const strangers = labels.filter((l) => !l.identity)

/** A FaceRes-era descriptor's shape (1024 values, unit length); its values are never read again. */
const oldDescriptor = (seed: number) => {
  const v = Float32Array.from({ length: 1024 }, (_, i) => Math.sin(i * 0.37 + seed))
  const n = Math.hypot(...v)
  return new Uint8Array(v.map((x) => x / n).buffer)
}

/** The database as the device before versioned descriptors left it: migrations up to LAST_OLD_MIGRATION. */
async function oldDatabase(dataDir: string): Promise<ReturnType<typeof openDb>> {
  const oldMigrations = mkdtempSync(path.join(tmpdir(), 'old-migrations-'))
  const journal = JSON.parse(readFileSync(path.join(migrationsDir, 'meta/_journal.json'), 'utf8'))
  const last = journal.entries.findIndex((e: { tag: string }) => e.tag === LAST_OLD_MIGRATION)
  journal.entries = journal.entries.slice(0, last + 1)
  mkdirSync(path.join(oldMigrations, 'meta'))
  writeFileSync(path.join(oldMigrations, 'meta/_journal.json'), JSON.stringify(journal))
  for (const f of readdirSync(migrationsDir)) if (f.endsWith('.sql') && journal.entries.some((e: { tag: string }) => `${e.tag}.sql` === f)) copyFileSync(path.join(migrationsDir, f), path.join(oldMigrations, f))
  const opened = openDb(`file:${path.join(dataDir, 'device.db')}`)
  await migrateDb(opened.db, oldMigrations)
  rmSync(oldMigrations, { recursive: true, force: true })
  return opened
}

/**
 * What a FaceRes-era gallery kept of a face (runtime/sidecar/engine.ts as it was, face-recognition
 * align `{eyes: [0, 1], scale: 3.2, eyeLine: 0.4}`): the crop levelled on BlazeFace's eyes, 3.2
 * eye distances wide, at most 160², JPEG quality 85.
 */
async function faceresPicture(engine: InferenceEngine, bytes: Buffer): Promise<Buffer> {
  const faces = await engine.describe({ algorithmId: 'face-recognition', image: { kind: 'bytes', bytes } })
  const face = faces.sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height)[0]!
  const { data, info } = await sharp(bytes).autoOrient().removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true })
  const [right, left] = face.landmark.map((p) => ({ x: p.xRatio, y: p.yRatio }))
  const crop = alignByEyes({ data, width: info.width, height: info.height }, right!, left!, 3.2, 0.4)
  return sharp(crop.data, { raw: { width: crop.width, height: crop.height, channels: 3 } }).resize(160, 160, { fit: 'inside' }).jpeg({ quality: 85 }).toBuffer()
}

describe('a face gallery enrolled with the FaceRes descriptor, after the change to the dlib ResNet', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'descriptor-upgrade-'))
  let device: DeviceProcess
  let mtk: string
  const ok = async (route: string, body: unknown) => {
    const answer = (await device.post(route, body, mtk)).body
    expect(answer.resCode, `${route}: ${JSON.stringify(answer.resMsg)}`).toBe(1)
    return answer.resData
  }

  beforeAll(async () => {
    const { db, close } = await oldDatabase(dataDir)
    const engine = new InferenceEngine({ projectRoot, intraOpThreads: 1, limits })
    try {
      await db.run(sql`INSERT INTO face_galleries (gallery_id, name, description, created_at, updated_at) VALUES ('staff', 'Staff', '', 1, 1)`)
      for (const [i, { file, identity }] of enrolled.entries()) {
        const picture = await faceresPicture(engine, readFileSync(path.join(facesDir, file)))
        await db.run(sql`INSERT INTO gallery_persons (gallery_id, person_id, name, attributes, created_at, updated_at) VALUES ('staff', ${`p-${identity}`}, ${`Person ${identity}`}, '{}', 1, 1)`)
        await db.run(sql`INSERT INTO gallery_faces (gallery_id, person_id, descriptor, picture, created_at) VALUES ('staff', ${`p-${identity}`}, vector32(${oldDescriptor(i)}), ${picture}, 1)`)
      }
      const [columns] = await db.all<{ n: number }>(sql`SELECT count(*) AS n FROM pragma_table_info('gallery_faces') WHERE name = 'descriptor_model'`)
      expect(columns!.n).toBe(0)
    } finally {
      close()
      await engine.close()
    }
    device = await startDevice({ dataDir })
    mtk = await device.adminToken()
  }, 180_000)

  afterAll(async () => {
    await device?.stop()
    device?.cleanup()
  })

  it('describes the stored pictures again in the background and reports it', async () => {
    let face: any
    for (const until = Date.now() + 120_000; Date.now() < until; await new Promise((r) => setTimeout(r, 500))) {
      face = (await ok('/gtw/cwai/System/QueryDeviceStatus', {})).galleryRedescription.find((r: any) => r.kind === 'face')
      if (face.state === 'done') break
    }
    expect(face).toEqual({ kind: 'face', state: 'done', model: 'build:face-recognition-resnet#descriptor', total: people.length, described: people.length, failed: 0 })
    // Body and things galleries hold nothing to describe again.
    const others = (await ok('/gtw/cwai/System/QueryDeviceStatus', {})).galleryRedescription.filter((r: any) => r.kind !== 'face')
    expect(others.map((r: any) => [r.kind, r.state, r.total])).toEqual([['body', 'idle', 0], ['things', 'idle', 0]])
    const { db, close } = openDb(`file:${path.join(dataDir, 'device.db')}`)
    try {
      const events = await db.all<{ payload: string }>(sql`SELECT payload FROM events WHERE kind = 'gallery.redescribing' ORDER BY id`)
      expect(events.map((e) => JSON.parse(e.payload))).toEqual([
        { kind: 'face', model: 'build:face-recognition-resnet#descriptor', state: 'running', total: people.length, described: 0, failed: 0 },
        { kind: 'face', model: 'build:face-recognition-resnet#descriptor', state: 'done', total: people.length, described: people.length, failed: 0 },
      ])
      const rows = await db.all<{ model: string; bytes: number }>(sql`SELECT descriptor_model AS model, length(descriptor) AS bytes FROM gallery_faces`)
      expect(rows).toEqual(people.map(() => ({ model: 'build:face-recognition-resnet#descriptor', bytes: 128 * 4 })))
    } finally {
      close()
    }
  })

  it('each enrolled person\'s other photos find that person first; at the default threshold nobody is named wrongly and no stranger is named', async () => {
    const taskId = randomUUID()
    await ok('/gtw/cwai/aihost/PTaskCreate', { taskId, algorithmCode: 'face-recognition', algorithmUpdateTime: String(Date.now()), taskConfig: { recognition: { galleryIds: ['staff'] } } })
    const largest = (resData: any) => targetsOf(resData).sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height)[0]!
    for (const { file, identity } of probes) {
      const imageBase64 = readFileSync(path.join(facesDir, file)).toString('base64')
      const { faces } = await ok('/gtw/cwai/Library/SearchByImage', { galleryId: 'staff', imageBase64, topK: 1 })
      const face = faces.sort((a: any, b: any) => b.box.width * b.box.height - a.box.width * a.box.height)[0]
      expect(face.matches[0].personId, file).toBe(`p-${identity}`)
      const label = largest(await ok('/gtw/cwai/aihost/PTaskDetectPic', { taskId, algorithmCode: 'face-recognition', imageBase64 })).confidence[1]!.label
      expect([`Person ${identity}`, 'unknown'], file).toContain(label)
    }
    for (const { file } of strangers) {
      const imageBase64 = readFileSync(path.join(facesDir, file)).toString('base64')
      expect(largest(await ok('/gtw/cwai/aihost/PTaskDetectPic', { taskId, algorithmCode: 'face-recognition', imageBase64 })).confidence[1]!.label, file).toBe('unknown')
    }
  })
})
