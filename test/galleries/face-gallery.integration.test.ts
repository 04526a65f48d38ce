/**
 * Face galleries over HTTP on the real runtime (spec 4.10 Face gallery, 2.4, 2.6): persons
 * registered from faces cropped out of the sample photos, recognized by PTaskDetectPic with
 * the face-recognition pipeline and taskConfig galleries, searched by image, forgotten when
 * deleted; images without exactly one face are refused with the count.
 */
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import { sql } from 'drizzle-orm'
import { expect } from 'vitest'
import { openDb } from '../../runtime/db/client.ts'
import type { Target } from '../../shared/inference/types.ts'
import { nearestImagesQuery } from '../../runtime/galleries/search.ts'
import { galleryTablesOf } from '../../shared/db/schema/index.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import type { DeviceProcess } from '../helpers/device.ts'
import { uploadFile } from '../helpers/upload-file.ts'
import { samplePath } from '../inference/helpers.ts'
import { cropFace, samplePhoto, targetsOf, type Box, type SamplePhoto } from './faces.ts'

const centreOf = (b: Box) => ({ x: b.x + b.width / 2, y: b.y + b.height / 2 })
const near = (a: Box, b: Box) => Math.hypot(centreOf(a).x - centreOf(b).x, centreOf(a).y - centreOf(b).y) < a.width / 2

test.describe('face gallery over HTTP', () => {
  let device: DeviceProcess
  let mtk: string
  const post = async (route: string, body: unknown) => (await device.post(route, body, mtk)).body
  const ok = async (route: string, body: unknown) => {
    const answer = await post(route, body)
    expect(answer.resCode, `${route}: ${JSON.stringify(answer.resMsg)}`).toBe(1)
    return answer.resData
  }
  const upload = (data: Buffer, purpose = 'image') => uploadFile(device, mtk, data, 'face.jpg', purpose)
  const detect = async (taskId: string, algorithmCode: string, image: Buffer) =>
    targetsOf(await ok('/gtw/cwai/aihost/PTaskDetectPic', { taskId, algorithmCode, imageBase64: image.toString('base64') }))
  const createTask = async (algorithmCode: string, taskConfig?: unknown) => {
    const taskId = randomUUID()
    await ok('/gtw/cwai/aihost/PTaskCreate', { taskId, algorithmCode, algorithmUpdateTime: String(Date.now()), ...(taskConfig ? { taskConfig } : {}) })
    return taskId
  }
  // sample1.jpg (3 people) and sample6.jpg (4 people): the faces the face detector finds.
  const photos: Record<number, SamplePhoto> = {}
  const galleryA = `a-${randomUUID().slice(0, 8)}`
  const galleryB = `b-${randomUUID().slice(0, 8)}`

  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
    for (const n of [1, 6]) photos[n] = await samplePhoto(device, mtk, n)
    expect(photos[1]!.faces).toHaveLength(3)
    expect(photos[6]!.faces).toHaveLength(4)
    await ok('/gtw/cwai/Library/AddLibrary', { galleryId: galleryA, name: 'Staff' })
    await ok('/gtw/cwai/Library/AddLibrary', { galleryId: galleryB, name: 'Visitors' })
    // Gallery A: the three people of sample1 (p1-0 as an upload, the others as Base64) and
    // the two leftmost of sample6 (an upload with purpose face-import). Gallery B: the third of sample6.
    const register = async (galleryId: string, personId: string, n: number, i: number, via: 'upload' | 'import' | 'base64') => {
      await ok('/gtw/cwai/Library/AddPerson', { galleryId, personId, name: `Person ${personId}`, attributes: { photo: n, index: i } })
      const face = await cropFace(photos[n]!, i)
      const image = via === 'base64' ? { imageBase64: face.toString('base64') } : { uploadId: await upload(face, via === 'import' ? 'face-import' : 'image') }
      const added = await ok('/gtw/cwai/Library/AddPersonImage', { galleryId, personId, ...image })
      expect(added.faceId).toBeGreaterThan(0)
    }
    await register(galleryA, 'p1-0', 1, 0, 'upload')
    await register(galleryA, 'p1-1', 1, 1, 'base64')
    await register(galleryA, 'p1-2', 1, 2, 'base64')
    await register(galleryA, 'p6-0', 6, 0, 'import')
    await register(galleryA, 'p6-1', 6, 1, 'base64')
    await register(galleryB, 'p6-2', 6, 2, 'base64')
  })

  test('lists galleries with their counts and persons with their face pictures', async () => {
    const galleries = await ok('/gtw/cwai/Library/LibraryPage', { pageNum: 1, pageSize: 10 })
    expect(galleries.total).toBe(2)
    expect(galleries.rows.map((g: any) => [g.galleryId, g.persons, g.faces])).toEqual([[galleryA, 5, 5], [galleryB, 1, 1]])
    const persons = await ok('/gtw/cwai/Library/PersonPage', { galleryId: galleryA, name: 'p6' })
    expect(persons.rows.map((p: any) => p.personId)).toEqual(['p6-0', 'p6-1'])
    expect(persons.rows[0].attributes).toEqual({ photo: 6, index: 0 })
    const picture = await fetch(`${device.url}/gtw/cwai/Library/FacePicture?faceId=${persons.rows[0].faceIds[0]}`, { headers: { mtk } })
    expect(picture.status).toBe(200)
    expect(picture.headers.get('content-type')).toBe('image/jpeg')
    const meta = await sharp(Buffer.from(await picture.arrayBuffer())).metadata()
    expect([meta.width, meta.height]).toEqual([160, 160])
    expect((await post('/gtw/cwai/Library/AddPerson', { galleryId: galleryA, personId: 'p6-0', name: 'again' })).resMsg[0].messageKey).toBe('api.error.GalleryPersonExists')
  })

  test('refuses an image with no face or several faces, naming the count, and stores nothing', async () => {
    await ok('/gtw/cwai/Library/AddPerson', { galleryId: galleryA, personId: 'nobody', name: 'Nobody' })
    const blank = await sharp({ create: { width: 320, height: 240, channels: 3, background: '#808080' } }).jpeg().toBuffer()
    const none = await post('/gtw/cwai/Library/AddPersonImage', { galleryId: galleryA, personId: 'nobody', imageBase64: blank.toString('base64') })
    expect(none.resCode).toBe(0)
    expect(none.resMsg[0].messageKey).toBe('api.error.GalleryFaceCount')
    expect(none.resMsg[0].details.faces).toBe(0)
    // The whole group photo, by upload: refused, and the upload is left for another try (spec 4.7).
    const uploadId = await upload(photos[1]!.bytes)
    const several = await post('/gtw/cwai/Library/AddPersonImage', { galleryId: galleryA, personId: 'nobody', uploadId })
    expect(several.resMsg[0].messageKey).toBe('api.error.GalleryFaceCount')
    expect(several.resMsg[0].details.faces).toBe(3)
    expect(several.resMsg[0].msgText).toContain('3 found')
    const again = await post('/gtw/cwai/Library/AddPersonImage', { galleryId: galleryA, personId: 'nobody', uploadId })
    expect([again.resMsg[0].messageKey, again.resMsg[0].details.faces]).toEqual(['api.error.GalleryFaceCount', 3])
    expect((await ok('/gtw/cwai/Library/PersonDetail', { galleryId: galleryA, personId: 'nobody' })).faceIds).toEqual([])
    await ok('/gtw/cwai/Library/DeletePerson', { galleryId: galleryA, personId: 'nobody' })
  })

  test('refuses a face too small, too blurred or turned too far, naming the measured value and its limit; a refused face is not stored', async () => {
    const labelled = (file: string) => readFileSync(path.join(import.meta.dirname, '../../../shared/media/faces', file))
    await ok('/gtw/cwai/Library/AddPerson', { galleryId: galleryA, personId: 'poor', name: 'Poor pictures' })
    const refusal = async (image: Buffer) => {
      const answer = await post('/gtw/cwai/Library/AddPersonImage', { galleryId: galleryA, personId: 'poor', imageBase64: image.toString('base64') })
      expect(answer.resCode).toBe(0)
      return answer.resMsg[0]
    }
    // stock-teen-4 at an eighth of its size: its eyes ~131 px apart at full size (bench/face-quality.ts), ~16 px now.
    const teen = labelled('stock-teen-4.jpg')
    const small = await refusal(await sharp(teen).resize(Math.round((await sharp(teen).metadata()).width! / 8)).jpeg().toBuffer())
    expect(small).toMatchObject({ messageKey: 'api.error.GalleryFaceTooSmall', recommendedAction: 'USE_BETTER_FACE_PHOTO', details: { measure: 'eyeDistancePx', limit: 24 } })
    expect(small.details.measured).toBeGreaterThan(8)
    expect(small.details.measured).toBeLessThan(24)
    // stock-emotions-b-1 under a Gaussian blur of σ 12 px (its face ~150 px between the eyes).
    const blurred = await refusal(await sharp(labelled('stock-emotions-b-1.jpg')).blur(12).jpeg().toBuffer())
    expect(blurred).toMatchObject({ messageKey: 'api.error.GalleryFaceBlurred', recommendedAction: 'USE_BETTER_FACE_PHOTO', details: { measure: 'sharpness', limit: 3 } })
    expect(blurred.details.measured).toBeLessThan(3)
    // sample2's three faces as the gallery's own detector finds them (SearchByImage): one woman in
    // full profile (one eye visible), the two others facing the camera; each cut out with its box's size around it.
    const sample2 = readFileSync(samplePath(2))
    const size = await sharp(sample2).metadata()
    const { faces: found } = await ok('/gtw/cwai/Library/SearchByImage', { imageBase64: sample2.toString('base64'), topK: 1 })
    expect(found).toHaveLength(3)
    const cut = (b: Box) => {
      const left = Math.max(0, Math.round(b.x - b.width)), top = Math.max(0, Math.round(b.y - b.height))
      return sharp(sample2).extract({ left, top, width: Math.min(size.width! - left, Math.round(b.width * 3)), height: Math.min(size.height! - top, Math.round(b.height * 3)) }).jpeg({ quality: 92 }).toBuffer()
    }
    const answers = []
    for (const f of found) answers.push((await post('/gtw/cwai/Library/AddPersonImage', { galleryId: galleryA, personId: 'poor', imageBase64: (await cut(f.box)).toString('base64') })).resMsg[0]?.messageKey ?? 'stored')
    expect(answers.filter((a) => a === 'api.error.GalleryFaceTurned'), JSON.stringify(answers)).toHaveLength(1)
    // The frontal faces pass the quality checks (a cut may also hold a neighbour's face: GalleryFaceCount).
    expect(answers.filter((a) => a !== 'api.error.GalleryFaceTurned').every((a) => a === 'stored' || a === 'api.error.GalleryFaceCount'), JSON.stringify(answers)).toBe(true)
    const turned = await refusal(await cut(found[answers.indexOf('api.error.GalleryFaceTurned')].box))
    expect(turned).toMatchObject({ details: { measure: 'turn', limit: 1 } })
    expect(turned.details.measured).toBeGreaterThan(1)
    // Only what was answered as stored was stored.
    expect((await ok('/gtw/cwai/Library/PersonDetail', { galleryId: galleryA, personId: 'poor' })).faceIds).toHaveLength(answers.filter((a) => a === 'stored').length)
    await ok('/gtw/cwai/Library/DeletePerson', { galleryId: galleryA, personId: 'poor' })
  })

  test('search by image: each face of the group photo finds its person first, with the similarity', async () => {
    // The whole photo, flipped: another view than the registered crops.
    const flipped = await sharp(photos[1]!.bytes).flop().jpeg().toBuffer()
    const { faces } = await ok('/gtw/cwai/Library/SearchByImage', { galleryId: galleryA, imageBase64: flipped.toString('base64'), topK: 3 })
    expect(faces).toHaveLength(3)
    const { width } = photos[1]!.size
    for (const [i, box] of photos[1]!.faces.entries()) {
      const mirrored = { ...box, x: width - box.x - box.width }
      const face = faces.find((f: any) => near(f.box, mirrored))
      expect(face, `face ${i}`).toBeDefined()
      expect(face.matches).toHaveLength(3)
      expect(face.matches[0]).toMatchObject({ galleryId: galleryA, personId: `p1-${i}`, name: `Person p1-${i}` })
      expect(face.matches[0].similarity).toBeGreaterThan(0.7)
      expect(face.matches[1].similarity).toBeLessThan(face.matches[0].similarity)
    }
    // A threshold (here the default, docs/galleries.md "Threshold") keeps only the matches that reach it; gallery B does not hold these people.
    const strict = await ok('/gtw/cwai/Library/SearchByImage', { galleryId: galleryA, imageBase64: flipped.toString('base64'), topK: 3, threshold: 0.93 })
    for (const face of strict.faces) expect(face.matches).toHaveLength(1)
    const other = await ok('/gtw/cwai/Library/SearchByImage', { galleryId: galleryB, imageBase64: flipped.toString('base64'), topK: 3 })
    for (const face of other.faces) expect(face.matches.map((m: any) => m.personId)).toEqual(['p6-2'])
  })

  test('PTaskDetectPic names the faces of the task\'s galleries; others are unknown; a deleted person becomes unknown', async () => {
    const label = (t: Target) => t.confidence[1]
    // sample6 rotated by 10°: p6-0 and p6-1 are in gallery A, p6-2 only in B, the fourth nowhere.
    const rotated = await sharp(photos[6]!.bytes).rotate(10, { background: '#000' }).jpeg().toBuffer()
    const onlyA = await createTask('face-recognition', { recognition: { galleryIds: [galleryA] } })
    const targets = (await detect(onlyA, 'face-recognition', rotated)).sort((a, b) => a.box.x - b.box.x)
    expect(targets).toHaveLength(4)
    for (const t of targets) expect(t.confidence[0]!.label).toBe('face')
    expect(targets.map((t) => label(t)!.label)).toEqual(['Person p6-0', 'Person p6-1', 'unknown', 'unknown'])
    expect(label(targets[0]!)!.confidence).toBeGreaterThan(0.7)
    // Every gallery (no galleryIds): p6-2 is named too.
    const all = await createTask('face-recognition')
    const everyone = (await detect(all, 'face-recognition', rotated)).sort((a, b) => a.box.x - b.box.x)
    expect(everyone.map((t) => label(t)!.label)).toEqual(['Person p6-0', 'Person p6-1', 'Person p6-2', 'unknown'])
    // A threshold above every similarity: nobody is named.
    const strict = await createTask('face-recognition', { recognition: { galleryIds: [galleryA], threshold: 0.999 } })
    expect((await detect(strict, 'face-recognition', rotated)).map((t) => label(t)!.label)).toEqual(['unknown', 'unknown', 'unknown', 'unknown'])

    await ok('/gtw/cwai/Library/DeletePerson', { galleryId: galleryA, personId: 'p6-1' })
    const after = (await detect(onlyA, 'face-recognition', rotated)).sort((a, b) => a.box.x - b.box.x)
    expect(after.map((t) => label(t)!.label)).toEqual(['Person p6-0', 'unknown', 'unknown', 'unknown'])
  })

  test('the same face enrolled for two people: deleting one leaves the other found (docs/galleries.md "Search")', async () => {
    // sample1's middle face, stored twice with one descriptor: a person of a third gallery, and a
    // copy of p1-1 in gallery B that is deleted again.
    const twin = `t-${randomUUID().slice(0, 8)}`
    await ok('/gtw/cwai/Library/AddLibrary', { galleryId: twin, name: 'Twin' })
    const face = (await cropFace(photos[1]!, 1)).toString('base64')
    for (const [galleryId, personId] of [[twin, 'twin-1'], [galleryB, 'copy-1']] as const) {
      await ok('/gtw/cwai/Library/AddPerson', { galleryId, personId, name: `Person ${personId}` })
      await ok('/gtw/cwai/Library/AddPersonImage', { galleryId, personId, imageBase64: face })
    }
    await ok('/gtw/cwai/Library/DeletePerson', { galleryId: galleryB, personId: 'copy-1' })
    const { faces } = await ok('/gtw/cwai/Library/SearchByImage', { imageBase64: face, topK: 5 })
    expect(faces).toHaveLength(1)
    const found = faces[0].matches.map((m: any) => `${m.galleryId}/${m.personId}`)
    expect(found).toContain(`${twin}/twin-1`)
    expect(found).toContain(`${galleryA}/p1-1`)
    expect(found).not.toContain(`${galleryB}/copy-1`)
    await ok('/gtw/cwai/Library/DeleteLibrary', { galleryId: twin })
  })

  test('beyond EXACT_SEARCH_MAX_IMAGES, searches through the vector index (vector_top_k), not by scanning the images, for every gallery kind', async () => {
    const { db, close } = openDb(`file:${path.join(device.dataDir, 'device.db')}`)
    try {
      for (const [images, dims] of [['gallery_faces', 128], ['body_gallery_images', 600], ['things_gallery_images', 600]] as const) {
        const tables = Object.values(galleryTablesOf).find((t) => t.vectorIndex === `${images}_descriptor_idx`)!
        const plan = await db.all<{ detail: string }>(sql`EXPLAIN QUERY PLAN ${nearestImagesQuery(tables, new Float32Array(dims).fill(0.03), 'any-model', 16, [galleryA])}`)
        const details = plan.map((p) => p.detail)
        expect(details[0]).toMatch(/^SCAN t VIRTUAL TABLE INDEX/)
        expect(details.some((d) => new RegExp(`SEARCH ${images} USING INTEGER PRIMARY KEY`).test(d))).toBe(true)
        expect(details.some((d) => new RegExp(`SCAN ${images}\\b`).test(d))).toBe(false)
      }
    } finally {
      close()
    }
  })
})
