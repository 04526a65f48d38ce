/**
 * A face gallery enrolled with an earlier descriptor keeps recognizing after the device starts
 * with the current one (docs/galleries.md "Descriptor model changes"): the migrations keep the
 * faces' stored pictures, the device describes them again in the background, reports it
 * (`QueryDeviceStatus` → `galleryRedescription`, `gallery.redescribing` events), and the
 * people's other photos find them. Two earlier descriptors: FaceRes (1024 values, before
 * `descriptor_model`), and the dlib ResNet's first version (L2-normalized, compared by the
 * cosine, the chip sampled from the photo itself: `build:face-recognition-resnet#descriptor`).
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { sql } from 'drizzle-orm'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrateDb, openDb } from '../../runtime/db/client.ts'
import { InferenceEngine } from '../../runtime/sidecar/engine.ts'
import { alignByEyes, alignToTemplate } from '../../runtime/sidecar/pipeline/crop.ts'
import { startDevice, type DeviceProcess } from '../helpers/device.ts'
import { limits } from '../inference/helpers.ts'
import { targetsOf } from './faces.ts'

const projectRoot = path.resolve(import.meta.dirname, '../..')
const facesDir = path.resolve(projectRoot, '../shared/media/faces')
const migrationsDir = path.join(projectRoot, 'shared/db/migrations')
/** The last migration before descriptors were versioned by model. */
const LAST_OLD_MIGRATION = '0016_stream_task_name'
/** The last migration of the dlib ResNet's first version (a cosine face index). */
const LAST_COSINE_MIGRATION = '0017_descriptor_model'
/** The current face descriptor (models/manifests/face-recognition.json). */
const MODEL = 'build:face-recognition-resnet#descriptor@2'
/** Its first version: L2-normalized, compared by the cosine. */
const MODEL_V1 = 'build:face-recognition-resnet#descriptor'

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

/** The database as an earlier device left it: migrations up to `lastMigration`. */
async function oldDatabase(dataDir: string, lastMigration = LAST_OLD_MIGRATION): Promise<ReturnType<typeof openDb>> {
  const oldMigrations = mkdtempSync(path.join(tmpdir(), 'old-migrations-'))
  const journal = JSON.parse(readFileSync(path.join(migrationsDir, 'meta/_journal.json'), 'utf8'))
  const last = journal.entries.findIndex((e: { tag: string }) => e.tag === lastMigration)
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
    expect(face).toEqual({ kind: 'face', state: 'done', model: MODEL, total: people.length, described: people.length, failed: 0 })
    // Body and things galleries hold nothing to describe again.
    const others = (await ok('/gtw/cwai/System/QueryDeviceStatus', {})).galleryRedescription.filter((r: any) => r.kind !== 'face')
    expect(others.map((r: any) => [r.kind, r.state, r.total])).toEqual([['body', 'idle', 0], ['things', 'idle', 0]])
    const { db, close } = openDb(`file:${path.join(dataDir, 'device.db')}`)
    try {
      const events = await db.all<{ payload: string }>(sql`SELECT payload FROM events WHERE kind = 'gallery.redescribing' ORDER BY id`)
      expect(events.map((e) => JSON.parse(e.payload))).toEqual([
        { kind: 'face', model: MODEL, state: 'running', total: people.length, described: 0, failed: 0 },
        { kind: 'face', model: MODEL, state: 'done', total: people.length, described: people.length, failed: 0 },
      ])
      const rows = await db.all<{ model: string; bytes: number }>(sql`SELECT descriptor_model AS model, length(descriptor) AS bytes FROM gallery_faces`)
      expect(rows).toEqual(people.map(() => ({ model: MODEL, bytes: 128 * 4 })))
    } finally {
      close()
    }
  })

  it('each enrolled person\'s other photos find that person first; at the default threshold nobody is named wrongly and no stranger is named', async () => {
    await expectRecognised(ok)
  })
})

/**
 * Each enrolled person's other photos find that person first (SearchByImage), and a
 * face-recognition task at the default threshold names them right or not at all; no stranger is named.
 */
async function expectRecognised(ok: (route: string, body: unknown) => Promise<any>): Promise<void> {
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
}

/**
 * What the dlib ResNet's first version kept of a face (face-recognition 2.0.0): dlib's chip cut
 * from the photo itself (no box filter), 150² → at most 160², JPEG quality 85, with the
 * L2-normalized descriptor. The descriptor stands for the first version's: the current one's of
 * the same photo, normalized (its values only matter if they were wrongly compared).
 */
async function firstVersionFace(engine: InferenceEngine, bytes: Buffer): Promise<{ picture: Buffer; descriptor: Uint8Array }> {
  const faces = await engine.describe({ algorithmId: 'face-recognition', image: { kind: 'bytes', bytes } })
  const face = faces.sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height)[0]!
  const { data, info } = await sharp(bytes).autoOrient().removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true })
  const recognizer = JSON.parse(readFileSync(path.join(projectRoot, 'models/manifests/face-recognition.json'), 'utf8')).nodes.find((n: { action: string }) => n.action === 'recognizer')
  const chip = alignToTemplate({ data, width: info.width, height: info.height }, face.landmark.slice(0, 4).map((p) => ({ x: p.xRatio, y: p.yRatio })), recognizer.align.template, recognizer.align.padding, 150, 150)
  const picture = await sharp(chip.data, { raw: { width: 150, height: 150, channels: 3 } }).resize(160, 160, { fit: 'inside' }).jpeg({ quality: 85 }).toBuffer()
  const n = Math.hypot(...face.descriptor)
  return { picture, descriptor: new Uint8Array(Float32Array.from(face.descriptor, (x) => x / n).buffer) }
}

describe('a face gallery enrolled with the first dlib ResNet descriptor (cosine), after the change to the Euclidean one', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'descriptor-upgrade-v1-'))
  let device: DeviceProcess
  let mtk: string
  const ok = async (route: string, body: unknown) => {
    const answer = (await device.post(route, body, mtk)).body
    expect(answer.resCode, `${route}: ${JSON.stringify(answer.resMsg)}`).toBe(1)
    return answer.resData
  }

  beforeAll(async () => {
    const { db, close } = await oldDatabase(dataDir, LAST_COSINE_MIGRATION)
    const engine = new InferenceEngine({ projectRoot, intraOpThreads: 1, limits })
    try {
      const [index] = await db.all<{ sql: string }>(sql`SELECT sql FROM sqlite_master WHERE name = 'gallery_faces_descriptor_idx'`)
      expect(index!.sql).toContain("'metric=cosine'")
      await db.run(sql`INSERT INTO face_galleries (gallery_id, name, description, created_at, updated_at) VALUES ('staff', 'Staff', '', 1, 1)`)
      for (const { file, identity } of enrolled) {
        const { picture, descriptor } = await firstVersionFace(engine, readFileSync(path.join(facesDir, file)))
        await db.run(sql`INSERT INTO gallery_persons (gallery_id, person_id, name, attributes, created_at, updated_at) VALUES ('staff', ${`p-${identity}`}, ${`Person ${identity}`}, '{}', 1, 1)`)
        await db.run(sql`INSERT INTO gallery_faces (gallery_id, person_id, descriptor, descriptor_model, picture, created_at) VALUES ('staff', ${`p-${identity}`}, vector32(${descriptor}), ${MODEL_V1}, ${picture}, 1)`)
      }
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

  it('describes the stored chips again with the raw descriptor, in an l2 index', async () => {
    let face: any
    for (const until = Date.now() + 120_000; Date.now() < until; await new Promise((r) => setTimeout(r, 500))) {
      face = (await ok('/gtw/cwai/System/QueryDeviceStatus', {})).galleryRedescription.find((r: any) => r.kind === 'face')
      if (face.state === 'done') break
    }
    expect(face).toEqual({ kind: 'face', state: 'done', model: MODEL, total: people.length, described: people.length, failed: 0 })
    const { db, close } = openDb(`file:${path.join(dataDir, 'device.db')}`)
    try {
      const [index] = await db.all<{ sql: string }>(sql`SELECT sql FROM sqlite_master WHERE name = 'gallery_faces_descriptor_idx'`)
      expect(index!.sql).toContain("'metric=l2'")
      const rows = await db.all<{ model: string; descriptor: ArrayBuffer }>(sql`SELECT descriptor_model AS model, descriptor FROM gallery_faces ORDER BY face_id`)
      expect(rows.map((r) => r.model)).toEqual(people.map(() => MODEL))
      // Raw dlib descriptors are 1.32–1.57 long on these photos (docs/galleries.md "Measure"), the first version's 1.
      for (const r of rows) expect(Math.hypot(...new Float32Array(Uint8Array.from(new Uint8Array(r.descriptor)).buffer))).toBeGreaterThan(1.2)
    } finally {
      close()
    }
  })

  it('each enrolled person\'s other photos find that person first; at the default threshold nobody is named wrongly and no stranger is named', async () => {
    await expectRecognised(ok)
  })
})
